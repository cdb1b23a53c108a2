//! The exit summary, and the grouping of findings by (rule, call site) it and the log share.
//!
//! Every finding is counted here ([`note`]) by its severity and by what became of it
//! (rejected, forwarded, suppressed), and grouped with the others of its rule from the same
//! call site (its first application frame; findings past the tracing budget, see
//! [`super::emit`], are grouped under an unknown call site). The log shows the first
//! [`SITE_REPEATS`] findings of each group, then one line saying the next ones are only
//! counted; the summary gives each group's count, most frequent first.
//!
//! At exit ([`write`]), by default when there were findings (`REGCHECK_SUMMARY=0`: never;
//! `1`: always), regcheck writes the totals and the groups, in text on stderr or as one JSON
//! `summary` object where the log goes.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::callsite::{self, Site, Stack};
use crate::rules::{Action, RuleId};

/// Messages logged per (rule, call site) before the next ones are only counted (unless
/// `REGCHECK_MAX_REPEATS=0`).
pub const SITE_REPEATS: u64 = 3;

/// What became of a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fate {
    Rejected,
    Forwarded,
    Suppressed,
    DryRun,
}

impl Fate {
    pub fn as_str(self) -> &'static str {
        match self {
            Fate::Rejected => "rejected",
            Fate::Forwarded => "forwarded",
            Fate::Suppressed => "suppressed",
            Fate::DryRun => "dry-run",
        }
    }

    pub fn of(outcome: super::Outcome) -> Fate {
        match outcome {
            super::Outcome::Rejected(_) => Fate::Rejected,
            super::Outcome::ReportOnly(_) | super::Outcome::Forwarded | super::Outcome::Refused(_) => Fate::Forwarded,
            super::Outcome::DryRun => Fate::DryRun,
        }
    }
}

/// The findings of one rule from one call site.
#[derive(Debug, Clone)]
pub struct Group {
    pub rule: RuleId,
    /// The severity of its first finding.
    pub action: Action,
    pub suppressed: bool,
    /// The call site's return address (0: not traced).
    pub key: usize,
    stack: Stack,
    pub count: u64,
    /// How many of them were logged.
    pub logged: u64,
}

impl Group {
    /// The call site, symbolised ("" when not traced).
    pub fn site(&self) -> Option<Site> {
        callsite::symbolize(&self.stack, 1).into_iter().next()
    }
}

#[derive(Default)]
struct Table {
    groups: Vec<Group>,
    /// By rule, call site and suppression (hashed cheaply: asked on every warned call).
    index: HashMap<(RuleId, usize, bool), usize, std::hash::BuildHasherDefault<crate::hash::AddrHasher>>,
    by_action: [u64; 4],
    by_fate: [u64; 4],
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

crate::platform::atfork::hold_across_fork!(static HANDLERS = TABLE, Option<Table>);

fn locked<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    HANDLERS.ensure();
    let mut t = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
    f(t.get_or_insert_with(Table::default))
}

/// The key of a captured stack: its first frame's address (0 when nothing was captured).
pub fn key_of(stack: &Stack) -> usize {
    stack.first_ip()
}

/// Count one finding of `rule` at `action` that met `fate`, from the call site `stack`;
/// returns how many findings its group has now.
pub fn note(rule: RuleId, action: Action, fate: Fate, stack: &Stack) -> u64 {
    let key = key_of(stack);
    let suppressed = fate == Fate::Suppressed;
    locked(|t| {
        if let Some(n) = t.by_action.get_mut(action as usize) {
            if !suppressed {
                *n += 1;
            }
        }
        t.by_fate[fate as usize] += 1;
        let i = match t.index.get(&(rule, key, suppressed)) {
            Some(&i) => i,
            None => {
                t.groups.push(Group { rule, action, suppressed, key, stack: stack.clone(), count: 0, logged: 0 });
                t.index.insert((rule, key, suppressed), t.groups.len() - 1);
                t.groups.len() - 1
            }
        };
        let g = &mut t.groups[i];
        g.count += 1;
        g.count
    })
}

/// Note that the latest finding of `rule` from `stack`'s call site was logged.
pub fn logged(rule: RuleId, stack: &Stack) {
    let key = key_of(stack);
    locked(|t| {
        if let Some(&i) = t.index.get(&(rule, key, false)) {
            t.groups[i].logged += 1;
        }
    });
}

/// The totals and the groups, most frequent first.
pub struct Snapshot {
    /// Findings (not suppressed) by severity: off, info, warn, error (as [`Action`]).
    pub by_action: [u64; 4],
    /// Findings by [`Fate`].
    pub by_fate: [u64; 4],
    pub groups: Vec<Group>,
}

impl Snapshot {
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Call sites of the groups of one severity (suppressed ones apart).
    fn sites(&self, action: Action) -> usize {
        let mut keys: Vec<usize> =
            self.groups.iter().filter(|g| !g.suppressed && g.action == action).map(|g| g.key).collect();
        keys.sort_unstable();
        keys.dedup();
        keys.len()
    }

    /// The headline: `3 errors from 2 call sites, 1 warning from 1 call site; 2 rejected, 2
    /// forwarded, 0 suppressed`.
    pub fn headline(&self) -> String {
        let mut parts = Vec::new();
        for (action, one, many) in
            [(Action::Error, "error", "errors"), (Action::Warn, "warning", "warnings"), (Action::Info, "note", "notes")]
        {
            let n = self.by_action[action as usize];
            if n > 0 {
                let s = self.sites(action);
                parts.push(format!(
                    "{n} {} from {s} call site{}",
                    if n == 1 { one } else { many },
                    if s == 1 { "" } else { "s" }
                ));
            }
        }
        if parts.is_empty() {
            parts.push("no findings".to_string());
        }
        let mut fates = vec![
            format!("{} rejected", self.by_fate[Fate::Rejected as usize]),
            format!("{} forwarded", self.by_fate[Fate::Forwarded as usize]),
            format!("{} suppressed", self.by_fate[Fate::Suppressed as usize]),
        ];
        let dry = self.by_fate[Fate::DryRun as usize];
        if dry > 0 {
            fates.push(format!("{dry} dry-run"));
        }
        format!("{}; {}", parts.join(", "), fates.join(", "))
    }
}

/// The totals and the groups so far (the groups most frequent first).
pub fn snapshot() -> Snapshot {
    let (by_action, by_fate, mut groups) = locked(|t| (t.by_action, t.by_fate, t.groups.clone()));
    groups.sort_by(|a, b| b.count.cmp(&a.count).then(a.rule.index().cmp(&b.rule.index())));
    Snapshot { by_action, by_fate, groups }
}

/// The severity column of a group.
pub fn severity(g: &Group) -> &'static str {
    if g.suppressed {
        "suppressed"
    } else {
        match g.action {
            Action::Error => "error",
            Action::Warn => "warning",
            Action::Info => "info",
            Action::Off => "off",
        }
    }
}

/// The text summary's lines (without the `regcheck: ` prefix of the first).
pub fn text(s: &Snapshot, unused: &[String], live: usize) -> Vec<String> {
    let mut lines = vec![format!("summary: {}", s.headline())];
    for g in &s.groups {
        let site = g.site().map_or_else(|| "call site not traced".to_string(), |s| format!("at {}", s.text()));
        let more = if g.suppressed || g.logged >= g.count {
            String::new()
        } else {
            format!(" ({} logged, and {} more from this call site)", g.logged, g.count - g.logged)
        };
        lines.push(format!("  {:>6}  {:<10} {:<30} {site}{more}", g.count, severity(g), g.rule.name()));
    }
    for u in unused {
        lines.push(format!("  suppression that matched nothing: {u}"));
    }
    if live > 0 {
        lines.push(format!("  {live} host registration(s) never unregistered"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_counted_and_sorted_most_frequent_first() {
        let s = Snapshot {
            by_action: [0, 0, 1, 3],
            by_fate: [2, 2, 1, 0],
            groups: vec![
                Group {
                    rule: RuleId::AclHostregAlign,
                    action: Action::Error,
                    suppressed: false,
                    key: 1,
                    stack: Stack::EMPTY,
                    count: 2,
                    logged: 1,
                },
                Group {
                    rule: RuleId::AclHostregNull,
                    action: Action::Error,
                    suppressed: false,
                    key: 2,
                    stack: Stack::EMPTY,
                    count: 1,
                    logged: 1,
                },
                Group {
                    rule: RuleId::AclHostregSizePages,
                    action: Action::Warn,
                    suppressed: false,
                    key: 2,
                    stack: Stack::EMPTY,
                    count: 1,
                    logged: 1,
                },
            ],
        };
        assert_eq!(
            s.headline(),
            "3 errors from 2 call sites, 1 warning from 1 call site; 2 rejected, 2 forwarded, 1 suppressed"
        );
        let t = text(&s, &["kv (supp:1)".into()], 2);
        assert!(t[1].contains("ACL-HOSTREG-ALIGN") && t[1].contains("and 1 more from this call site"), "{t:?}");
        assert!(t.iter().any(|l| l.contains("matched nothing: kv (supp:1)")), "{t:?}");
        assert!(t.last().unwrap().contains("2 host registration(s)"));
    }
}

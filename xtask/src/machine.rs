//! What the test suite needs of the machine beyond tools: reserved huge pages.
//!
//! `src/platform/memmap.rs::hugetlb_region` maps a 2 MiB huge page (`MAP_HUGETLB`), which the
//! kernel grants only from the pages reserved with `vm.nr_hugepages` (0 on a fresh machine).
//! `cargo xtask test` and `cargo xtask cross` reserve them as root, saying so, as they install
//! the tools they need; without root (or with `test --no-install`) they say how (and that `REGCHECK_TEST_ALLOW_SKIP` accepts
//! the test's skip), then go on.

use std::process::Command;

use crate::util::{is_root, shown};

/// The huge pages the tests need reserved (`.ci/run` reserves as many).
pub const HUGE_PAGES: u64 = 4;
/// The test that needs them, by the name `REGCHECK_TEST_ALLOW_SKIP` takes.
const TEST: &str = "hugetlb_region";
const TEST_PATH: &str = "src/platform/memmap.rs::hugetlb_region";
const SYSCTL_FILE: &str = "/proc/sys/vm/nr_hugepages";

/// What to do about the huge pages, given how many are reserved (`None`: unreadable), whether
/// this process is root, and `REGCHECK_TEST_ALLOW_SKIP`.
#[derive(Debug, PartialEq, Eq)]
pub enum Plan {
    /// Enough are reserved: nothing to do.
    Enough,
    /// Reserve them (root).
    Reserve,
    /// Say how, then go on (not root); `skip_accepted` when the test's skip is allowed.
    Tell { skip_accepted: bool },
}

pub fn plan(reserved: Option<u64>, root: bool, allow_skip: &str) -> Plan {
    if reserved.is_some_and(|n| n >= HUGE_PAGES) {
        Plan::Enough
    } else if root {
        Plan::Reserve
    } else {
        Plan::Tell { skip_accepted: allow_skip.split(',').any(|t| t.trim() == TEST) }
    }
}

/// The message for a [`Plan::Tell`]; `why` says why nothing is reserved here.
pub fn how(reserved: Option<u64>, skip_accepted: bool, why: &str) -> String {
    let have = reserved.map_or_else(|| format!("{SYSCTL_FILE} is unreadable"), |n| format!("vm.nr_hugepages is {n}"));
    if skip_accepted {
        return format!(
            "xtask: {TEST_PATH} needs {HUGE_PAGES} reserved huge pages and {have}; it will be skipped \
             (REGCHECK_TEST_ALLOW_SKIP names {TEST})"
        );
    }
    format!(
        "xtask: {TEST_PATH} needs {HUGE_PAGES} reserved huge pages, {have}, and {why}, so they are \
         not reserved: that test will fail.\n\
         xtask: to reserve them, as root: sysctl -w vm.nr_hugepages={HUGE_PAGES}   (or run this command as \
         root, which does it)\n\
         xtask: or accept the test's skip: REGCHECK_TEST_ALLOW_SKIP={TEST}"
    )
}

fn reserved() -> Option<u64> {
    std::fs::read_to_string(SYSCTL_FILE).ok()?.trim().parse().ok()
}

/// Makes sure the huge pages the tests need are reserved, as far as can be done here, saying
/// what it does. `task` names the command in the messages; with `change` false (`--no-install`)
/// it only says how.
pub fn ensure_huge_pages(task: &str, change: bool) {
    let have = reserved();
    let root = is_root();
    match plan(have, root && change, &std::env::var("REGCHECK_TEST_ALLOW_SKIP").unwrap_or_default()) {
        Plan::Enough => {}
        Plan::Tell { skip_accepted } => {
            let why = if root { "--no-install was given" } else { "this is not root" };
            eprintln!("{}", how(have, skip_accepted, why))
        }
        Plan::Reserve => {
            let mut sysctl = Command::new("sysctl");
            sysctl.args(["-q", "-w", &format!("vm.nr_hugepages={HUGE_PAGES}")]);
            eprintln!(
                "xtask: {task}: reserving {HUGE_PAGES} huge pages for {TEST_PATH} (vm.nr_hugepages was {}): {}",
                have.map_or_else(|| "unreadable".to_string(), |n| n.to_string()),
                shown(&sysctl)
            );
            let ok = sysctl.status().map(|s| s.success()).unwrap_or(false);
            if !ok {
                // no sysctl program: the file itself
                let _ = std::fs::write(SYSCTL_FILE, format!("{HUGE_PAGES}\n"));
            }
            let now = reserved();
            if now.is_none_or(|n| n < HUGE_PAGES) {
                eprintln!(
                    "xtask: {task}: the kernel reserved {} of {HUGE_PAGES} huge pages (too little free memory, or \
                     a container that may not change vm.nr_hugepages): {TEST_PATH} may fail; \
                     REGCHECK_TEST_ALLOW_SKIP={TEST} accepts its skip",
                    now.map_or_else(|| "none".to_string(), |n| n.to_string())
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserves_as_root_and_tells_otherwise() {
        assert_eq!(plan(Some(4), false, ""), Plan::Enough);
        assert_eq!(plan(Some(16), true, ""), Plan::Enough);
        assert_eq!(plan(Some(0), true, ""), Plan::Reserve);
        assert_eq!(plan(None, true, ""), Plan::Reserve);
        assert_eq!(plan(Some(3), true, ""), Plan::Reserve);
        assert_eq!(plan(Some(0), false, ""), Plan::Tell { skip_accepted: false });
        assert_eq!(plan(Some(0), false, "mlocked_region"), Plan::Tell { skip_accepted: false });
        assert_eq!(plan(Some(0), false, "mlocked_region, hugetlb_region"), Plan::Tell { skip_accepted: true });
    }

    #[test]
    fn says_how_without_root() {
        let text = how(Some(0), false, "this is not root");
        assert!(text.contains("sysctl -w vm.nr_hugepages=4"), "{text}");
        assert!(text.contains("REGCHECK_TEST_ALLOW_SKIP=hugetlb_region"), "{text}");
        assert!(text.contains("vm.nr_hugepages is 0"), "{text}");
        assert!(text.contains("this is not root"), "{text}");
        assert!(how(None, true, "").contains("will be skipped"));
    }
}

//! The numeric and boolean settings of a GlobalResourceConfig (or a `HixlCS*` config's
//! `global_resource_config`) as HIXL's option parser reads them, per release: what every
//! release refuses, and what only releases after 9.1 refuse (tag v9.1.0's own parser converts
//! fractions and booleans, wraps `listen_port` to 32 bits, checks no `connect_pool` range and
//! reads neither `enable_aicpu_unfold` nor its rule).

use serde_json::Value;

use super::OptionsFacts;

/// What HIXL makes of an integer field.
#[derive(Debug, Clone, PartialEq, Eq)]
enum IntField {
    Ok(i64),
    /// Refused by every release (the text says why).
    Refused(String),
    /// A JSON number with a fraction or an exponent, or a boolean: refused after 9.1 (hicann/hixl
    /// 1577fcd, `JsonToNumber` takes only an integer JSON value); tag v9.1.0 converts it
    /// (nlohmann's `get<T>`: truncated toward zero, `true` 1) to a value within the range.
    After91(String),
}

/// An integer field as HIXL reads it (`ParseIntegerFieldInRange` over `JsonToNumber`,
/// `src/hixl/engine/hixl_options.cc`, `src/hixl/common/json_utils.h`): a JSON integer or a string
/// holding one, within `[lo, hi]`; a number with a fraction or an exponent, or a boolean, is
/// refused after 9.1. `v91` says which values tag v9.1.0 accepts (`(value, given as a string)`;
/// it converts a fraction or a boolean first). `None` when absent.
fn integer_field(obj: &Value, key: &str, lo: i64, hi: i64, v91: V91) -> Option<IntField> {
    let v = obj.get(key)?;
    let converted = match v {
        Value::Bool(b) => Some(i64::from(*b)),
        Value::Number(n) if n.as_i64().is_none() && n.as_u64().is_none() => {
            n.as_f64().map(f64::trunc).filter(|t| t.abs() < 9.0e18).map(|t| t as i64)
        }
        _ => None,
    };
    if let Some(t) = converted {
        return Some(if v91(t, false) {
            IntField::After91(format!(
                "{key} {v} is not an integer JSON value (refused after 9.1, hicann/hixl 1577fcd; CANN 9.1.0 converts it to {t})"
            ))
        } else {
            IntField::Refused(format!("{key} {v} is not an integer, nor in [{lo}, {hi}] once converted to {t}"))
        });
    }
    let (n, string) = match v {
        Value::Number(n) => (n.as_i64().or_else(|| n.as_u64().map(|_| i64::MAX)), false),
        Value::String(s) => (s.parse::<i64>().ok(), true),
        _ => (None, false),
    };
    Some(match n {
        Some(n) if (lo..=hi).contains(&n) => IntField::Ok(n),
        Some(n) if v91(n, string) => IntField::After91(format!(
            "{key} {v} is not in [{lo}, {hi}] (refused after 9.1; CANN 9.1.0 takes it: {})",
            if key.ends_with("listen_port") { "it wraps to 32 bits" } else { "it checks no range" }
        )),
        Some(_) => IntField::Refused(format!("{key} {v} is not in [{lo}, {hi}]")),
        None => IntField::Refused(format!("{key} {v} is not an integer")),
    })
}

/// Which values tag v9.1.0 accepts for a field: `(value, given as a string)`.
type V91 = fn(i64, bool) -> bool;

/// The integer settings of a GlobalResourceConfig and their ranges (`hixl_options.cc`;
/// `kQosMin`/`kQosMax` in `common/hixl_inner_types.h`; the fabric-memory bounds in
/// `fabric_mem/fabric_mem_config.h`). The fabric-memory ones are read flat and inside a
/// nested `"fabric_memory"` object (`ParseFabricMemoryConfig`).
/// With what tag v9.1.0 accepts of each (`hixl_options.cc` there: `JsonToNumber<uint32_t>` for
/// listen_port, which wraps a JSON number to 32 bits, then [1, 65535]; no range for connect_pool's,
/// `JsonToNumber<int32_t>` only; the others as master).
const INTEGER_FIELDS: &[(&str, i64, i64, V91)] = &[
    ("comm_resource_config.listen_port", 1, 65535, |n, string| {
        let port = if string { n } else { i64::from(n as u32) };
        (1..=65535).contains(&port)
    }),
    ("comm_resource_config.qos", 0, 7, |n, _| (0..=7).contains(&n)),
    ("comm_resource_config.max_active_channels", 1, u32::MAX as i64, |n, _| (1..=u32::MAX as i64).contains(&n)),
    ("connect_pool.thread_num", 1, 64, |_, _| true),
    ("connect_pool.task_queue_capacity", 1, 65535, |_, _| true),
];
const FABRIC_FIELDS: &[(&str, i64, i64, V91)] = &[
    ("max_capacity", 1, 1024, |n, _| (1..=1024).contains(&n)),
    ("start_address", 0, 1024, |n, _| (0..=1024).contains(&n)),
    ("task_stream_num", 1, 8, |n, _| (1..=8).contains(&n)),
];

/// The numeric and boolean settings HIXL's option parser refuses.
pub(super) fn check_settings(v: &Value, facts: &mut OptionsFacts, what: &str) {
    let mut bad = Vec::new();
    let mut after_9_1 = Vec::new();
    for (key, lo, hi, v91) in INTEGER_FIELDS {
        match integer_field(v, key, *lo, *hi, *v91) {
            Some(IntField::Refused(e)) => bad.push(e),
            Some(IntField::After91(e)) => after_9_1.push(e),
            _ => {}
        }
    }
    let mut streams = None;
    let mut unfold = None;
    let mut fabric = |obj: &Value, prefix: &str, bad: &mut Vec<String>, after_9_1: &mut Vec<String>| {
        let nested = if prefix.is_empty() { "fabric_memory." } else { "" };
        for (key, lo, hi, v91) in FABRIC_FIELDS {
            let name = format!("{prefix}{key}");
            match integer_field(obj, &name, *lo, *hi, *v91) {
                Some(IntField::Ok(n)) if *key == "task_stream_num" => streams = Some(n),
                Some(IntField::Refused(e)) => bad.push(format!("{nested}{e}")),
                Some(IntField::After91(e)) => after_9_1.push(format!("{nested}{e}")),
                _ => {}
            }
        }
        let name = format!("{prefix}enable_aicpu_unfold");
        // enable_aicpu_unfold and its rule are read after 9.1 only (tag v9.1.0 reads neither)
        match obj.get(&name) {
            Some(Value::Bool(b)) => unfold = Some(*b),
            Some(other) => after_9_1
                .push(format!("fabric_memory.enable_aicpu_unfold {other} is not a JSON boolean (read after 9.1 only)")),
            None => {}
        }
    };
    if let Some(nested) = v.get("fabric_memory").filter(|n| n.is_object()) {
        fabric(nested, "", &mut bad, &mut after_9_1);
    }
    fabric(v, "fabric_memory.", &mut bad, &mut after_9_1);
    if let (true, Some(n)) = (unfold.unwrap_or(true), streams) {
        if n != 1 {
            after_9_1.push(format!(
                "fabric_memory.task_stream_num {n} with aicpu unfold on (the default): only 1 is accepted (after 9.1; CANN 9.1.0 has no aicpu unfold)"
            ));
        }
    }
    facts.invalid.extend(bad.into_iter().map(|e| format!("{what}: {e}")));
    facts.invalid_after_9_1.extend(after_9_1.into_iter().map(|e| format!("{what}: {e}")));
}

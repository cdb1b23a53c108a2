//! LLM-DataDist's `RegisterKvCache` checks (hicann/hixl `src/llm_datadist/api/llm_datadist_impl.cc`,
//! `LlmDataDistImpl::RegisterKvCache`, then `cache_mgr/data_cache_engine.cc`,
//! `DataCacheEngine::Register`, and `common/llm_utils.cc`, `CalcTensorMemSize`), in the vendor's
//! order: the first that fails is the vendor's answer. And the finding at `aclrtFree` of device
//! memory that is still registered.

use super::{Finding, RuleId};

/// `LLM_FAILED` (= `ge::FAILED`).
pub const LLM_FAILED: u32 = 0xFFFF_FFFF;
/// `LLM_PARAM_INVALID`.
pub const LLM_PARAM_INVALID: u32 = 0x5010_B005;
/// `LLM_TIMEOUT`, `LLM_NOT_YET_LINK`, `LLM_ALREADY_LINK`, `LLM_FEATURE_NOT_ENABLED`.
pub const LLM_TIMEOUT: u32 = 0x5010_B01A;
pub const LLM_NOT_YET_LINK: u32 = 0x5010_B007;
pub const LLM_ALREADY_LINK: u32 = 0x5010_B008;
pub const LLM_FEATURE_NOT_ENABLED: u32 = 0x5010_B019;

/// `DataCacheEngine::Register`'s `kMaxDimNum`: a shape has fewer dimensions.
pub const MAX_DIMS: usize = 32;

/// What `RegisterKvCache` is given (`None`: could not be read).
#[derive(Debug, Clone, Copy)]
pub struct KvCacheArgs<'a> {
    pub placement: u32,
    pub num_tensors: u32,
    pub data_type: i32,
    pub shape: Option<&'a [i64]>,
    pub addrs: Option<&'a [u64]>,
}

/// The HIXL code of the engine's answer as `LlmDataDist` returns it (`common/llm_log.h`,
/// `ConvertHixlError2Ge`).
pub fn code_from_hixl(code: u32) -> u32 {
    match code {
        0 => 0,
        103900 => LLM_PARAM_INVALID,
        103901 => LLM_TIMEOUT,
        103902 => LLM_NOT_YET_LINK,
        103903 => LLM_ALREADY_LINK,
        103905 => LLM_FEATURE_NOT_ENABLED,
        _ => LLM_FAILED,
    }
}

/// metadef's size of a data type: bytes, or bits for the sub-byte types (`Err`); `None` for a
/// type without a size. LLM-DataDist gives the two string types 16 bytes.
fn type_size(data_type: i32) -> Option<Result<u64, u64>> {
    // bytes; negative: bits; 0: no size (index 5 is reserved, 28 is DT_UNDEFINED)
    const BYTES: [i64; 42] = [
        4, 2, 1, 4, 1, 0, 2, 2, 4, 8, 8, 8, 1, 16, 1, 1, 8, 16, 1, 2, 4, 1, 2, 8, 16, 5, 8, 2, 0, -4, -1, -2, -2, 4, 1,
        1, 1, 1, -6, -6, -4, -4,
    ];
    let s = *BYTES.get(usize::try_from(data_type).ok()?)?;
    match s {
        0 => None,
        s if s < 0 => Some(Err(s.unsigned_abs())),
        s => Some(Ok(s as u64)),
    }
}

/// `CalcTensorMemSize`: the bytes of one tensor, or what is wrong (the argument and why).
pub fn tensor_size(shape: &[i64], data_type: i32) -> Result<u64, (RuleId, String)> {
    let mut n: i64 = 1;
    for (i, d) in shape.iter().enumerate() {
        if *d <= 0 {
            return Err((
                RuleId::DatadistTensorSize,
                format!("cache_desc.shape[{i}] is {d}: every dimension must be > 0"),
            ));
        }
        n = n.checked_mul(*d).ok_or_else(|| {
            (RuleId::DatadistTensorSize, format!("the element count of cache_desc.shape {shape:?} overflows int64"))
        })?;
    }
    let Some(size) = type_size(data_type) else {
        return Err((RuleId::DatadistTensorSize, format!("cache_desc.data_type {data_type} has no size")));
    };
    let overflow =
        || (RuleId::DatadistTensorSize, format!("{n} elements of data type {data_type} overflow int64 bytes"));
    match size {
        Ok(b) => n.checked_mul(b as i64).map(|v| v as u64).ok_or_else(overflow),
        Err(bits) => n.checked_mul(bits as i64).map(|v| (v as u64).div_ceil(8)).ok_or_else(overflow),
    }
}

/// `RegisterKvCache`'s own checks, in the vendor's order; the first one that fails (`None`:
/// the tensors go to the backend, each `tensor_bytes` long). `initialized`: `None` when the
/// instance is not known to regcheck.
pub fn check_register_kv_cache(initialized: Option<bool>, a: &KvCacheArgs) -> Result<u64, Finding> {
    let bad = |rule, arg, problem: String, fix: &str| Err(Finding::new(rule, arg, problem, fix.to_string()));
    if initialized == Some(false) {
        return bad(
            RuleId::DatadistNotInitialized,
            "this",
            "the LlmDataDist is not initialised (Initialize never succeeded, or Finalize was called)".into(),
            "call Initialize (with llm.DeviceId) first, and register before Finalize",
        );
    }
    let Some(addrs) = a.addrs else { return Ok(0) };
    if addrs.is_empty() {
        return bad(
            RuleId::DatadistAddrsEmpty,
            "addrs",
            "addrs is empty".into(),
            "pass one address per tensor of the cache",
        );
    }
    if addrs.len() != a.num_tensors as usize {
        return bad(
            RuleId::DatadistAddrsCount,
            "addrs",
            format!("addrs holds {} address(es) but cache_desc.num_tensors is {}", addrs.len(), a.num_tensors),
            "set cache_desc.num_tensors to addrs.size()",
        );
    }
    if let Some(i) = addrs.iter().position(|x| *x == 0) {
        return bad(
            RuleId::DatadistAddrNull,
            "addrs",
            format!("addrs[{i}] is 0"),
            "pass the address of every tensor (a tensor not allocated yet has none)",
        );
    }
    let Some(shape) = a.shape else { return Ok(0) };
    if shape.is_empty() || shape.len() >= MAX_DIMS {
        return bad(
            RuleId::DatadistShape,
            "cache_desc.shape",
            format!("cache_desc.shape has {} dimension(s): it needs 1 to {}", shape.len(), MAX_DIMS - 1),
            "describe one tensor's shape, e.g. {num_blocks, block_size, heads, head_dim}",
        );
    }
    tensor_size(shape, a.data_type).or_else(|(rule, problem)| {
        let arg = if problem.starts_with("cache_desc.data_type") { "cache_desc.data_type" } else { "cache_desc.shape" };
        bad(
            rule,
            arg,
            problem,
            "describe one tensor: positive dimensions and a data type with a size (DT_FLOAT16, DT_BF16, DT_INT8, ...)",
        )
    })
}

/// `UnregisterKvCache`: the instance must be initialised.
pub fn check_unregister_kv_cache(initialized: Option<bool>) -> Option<Finding> {
    (initialized == Some(false)).then(|| {
        Finding::new(
            RuleId::DatadistNotInitialized,
            "this",
            "the LlmDataDist is not initialised (Initialize never succeeded, or Finalize was called)",
            "unregister caches before Finalize (Finalize unregisters them itself)",
        )
    })
}

/// One live registration found in freed memory: who holds it, where, and where it was made.
#[derive(Debug, Clone)]
pub struct FreedReg {
    pub by: String,
    pub addr: usize,
    pub len: u64,
    pub site: Option<String>,
}

/// `aclrtFree(devPtr)` of memory that HIXL, ADXL, LLM-DataDist or HCCL still has registered.
pub fn check_free_registered(ptr: usize, live: &[FreedReg]) -> Option<Finding> {
    let first = live.first()?;
    let list: Vec<String> = live
        .iter()
        .take(4)
        .map(|r| {
            let site = r.site.as_deref().map(|s| format!(", registered at {s}")).unwrap_or_default();
            format!("[0x{:x}, +{}) by {}{site}", r.addr, r.len, r.by)
        })
        .collect();
    let fix = if first.by.starts_with("LlmDataDist") {
        "call UnregisterKvCache(cache_id) (or Finalize) before aclrtFree".to_string()
    } else if first.by.starts_with("Hccl") {
        "call HcclDeregisterGlobalMem on its handle before aclrtFree".to_string()
    } else {
        "call DeregisterMem(handle) on each registration before aclrtFree".to_string()
    };
    Some(Finding::new(
        RuleId::HixlFreeRegistered,
        "devPtr",
        format!(
            "0x{ptr:x} is freed while {} registration(s) in it are live: {}{}; the engine keeps using the memory (a peer's transfer writes into whatever is allocated there next)",
            live.len(),
            list.join("; "),
            if live.len() > 4 { "; ..." } else { "" }
        ),
        fix,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args<'a>(shape: &'a [i64], addrs: &'a [u64], n: u32) -> KvCacheArgs<'a> {
        KvCacheArgs { placement: 1, num_tensors: n, data_type: 1, shape: Some(shape), addrs: Some(addrs) }
    }

    #[test]
    fn vendor_order() {
        let s = [4, 128];
        assert_eq!(
            check_register_kv_cache(Some(false), &args(&s, &[], 0)).unwrap_err().rule,
            RuleId::DatadistNotInitialized
        );
        assert_eq!(
            check_register_kv_cache(Some(true), &args(&s, &[], 0)).unwrap_err().rule,
            RuleId::DatadistAddrsEmpty
        );
        assert_eq!(check_register_kv_cache(None, &args(&s, &[1, 0], 1)).unwrap_err().rule, RuleId::DatadistAddrsCount);
        assert_eq!(check_register_kv_cache(None, &args(&s, &[1, 0], 2)).unwrap_err().rule, RuleId::DatadistAddrNull);
        assert_eq!(check_register_kv_cache(None, &args(&[], &[1], 1)).unwrap_err().rule, RuleId::DatadistShape);
        assert_eq!(check_register_kv_cache(None, &args(&[1; 32], &[1], 1)).unwrap_err().rule, RuleId::DatadistShape);
        assert_eq!(check_register_kv_cache(None, &args(&[1; 31], &[1], 1)).unwrap(), 2);
        assert_eq!(
            check_register_kv_cache(None, &args(&[4, 0], &[1], 1)).unwrap_err().rule,
            RuleId::DatadistTensorSize
        );
        assert_eq!(check_register_kv_cache(Some(true), &args(&s, &[0x1000], 1)).unwrap(), 1024);
    }

    #[test]
    fn sizes() {
        assert_eq!(tensor_size(&[3], 27), Ok(6), "bf16");
        assert_eq!(tensor_size(&[3], 29), Ok(2), "int4: 12 bits round up");
        assert_eq!(tensor_size(&[3], 13), Ok(48), "LLM-DataDist's string size");
        assert_eq!(tensor_size(&[3], 28).unwrap_err().0, RuleId::DatadistTensorSize, "DT_UNDEFINED");
        assert_eq!(tensor_size(&[3], 5).unwrap_err().0, RuleId::DatadistTensorSize, "reserved");
        assert_eq!(tensor_size(&[3], 99).unwrap_err().0, RuleId::DatadistTensorSize);
        assert_eq!(tensor_size(&[i64::MAX, 2], 1).unwrap_err().0, RuleId::DatadistTensorSize);
        assert_eq!(tensor_size(&[i64::MAX / 2], 9).unwrap_err().0, RuleId::DatadistTensorSize);
        assert_eq!(code_from_hixl(103900), LLM_PARAM_INVALID);
        assert_eq!(code_from_hixl(503900), LLM_FAILED);
    }

    #[test]
    fn free_names_the_registration_and_the_fix() {
        assert!(check_free_registered(0x1000, &[]).is_none());
        let r = FreedReg {
            by: "LlmDataDist::RegisterKvCache (cache_id 1)".into(),
            addr: 0x1000,
            len: 64,
            site: Some("main (xllm.cpp:42)".into()),
        };
        let f = check_free_registered(0x1000, &[r]).unwrap();
        assert_eq!(f.rule, RuleId::HixlFreeRegistered);
        assert!(f.problem.contains("cache_id 1") && f.problem.contains("xllm.cpp:42"), "{}", f.problem);
        assert!(f.fix.contains("UnregisterKvCache"));
    }
}

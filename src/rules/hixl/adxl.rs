//! The rules only the `adxl::AdxlEngine` front end has (`ADXL-*`): checks of
//! `src/llm_datadist/api/adxl_engine_impl.cc` that `hixl::Hixl` lacks, and the hazards of how
//! Mooncake's Ascend transport drives ADXL. Every other ADXL check is a HIXL rule keyed by
//! the engine the options select (the two front ends share one engine layer).

use super::*;

/// `ADXL-TIMEOUT`: `Connect`, `Disconnect` and `TransferSync` refuse `timeout_in_millis <= 0`
/// (hicann/hixl `src/llm_datadist/api/adxl_engine_impl.cc`).
pub fn check_timeout(call: &str, timeout: i32) -> Option<Finding> {
    (timeout <= 0).then(|| {
        Finding::new(
            RuleId::AdxlTimeout,
            "timeout_in_millis",
            format!("is {timeout}: {call} needs a time-out above 0 ms"),
            "pass a positive time-out in milliseconds (the header's default is 1000; Mooncake passes ASCEND_CONNECT_TIMEOUT / ASCEND_TRANSFER_TIMEOUT, 10000 by default)",
        )
    })
}

/// `ADXL-STATUS-NULL-REQ`: `GetTransferStatus` of a NULL request fails (503900).
pub fn check_status_req(req: Option<usize>) -> Option<Finding> {
    let (problem, fix) = match req {
        Some(0) => (
            "is NULL: no TransferAsync request".to_string(),
            "pass the TransferReq a successful TransferAsync wrote (and only while it is pending)",
        ),
        None => ("is a NULL reference".to_string(), "pass a TransferReq variable"),
        Some(_) => return None,
    };
    Some(Finding::new(RuleId::AdxlStatusNullReq, "req", problem, fix))
}

/// `ADXL-XFER-CONTEXT`: a transfer from a thread other than Initialize's whose current ACL
/// context is not the engine's (Initialize's thread's). Mooncake's worker threads set the
/// engine's context first; a program that does not relies on the engine switching contexts.
pub fn check_xfer_context(call: &str, t: &ThreadFacts) -> Result<Option<Finding>, Skip> {
    let Some((cur, init)) = other_context(RuleId::AdxlXferContext, t)? else { return Ok(None) };
    Ok(Some(Finding::new(
        RuleId::AdxlXferContext,
        "(thread)",
        format!(
            "{call} is called from a thread other than Initialize's whose current ACL context ({cur}) is not the engine's ({init}, Initialize's thread's): the engine's streams and memory belong to its context, and the documented constraint is that calls run in it (published engines switch to their own context around each call; earlier releases do not)"
        ),
        "on the worker thread, call aclrtSetCurrentContext(engine_ctx) (the context aclrtGetCurrentContext gave on Initialize's thread) before transferring, as Mooncake's transfer workers do",
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout() {
        assert!(check_timeout("AdxlEngine::Connect", 1).is_none());
        let f = check_timeout("AdxlEngine::Connect", 0).unwrap();
        assert_eq!((f.rule, f.arg), (RuleId::AdxlTimeout, "timeout_in_millis"));
        assert!(f.problem.contains("is 0") && f.problem.contains("AdxlEngine::Connect"), "{}", f.problem);
        assert!(check_timeout("AdxlEngine::TransferSync", -5).unwrap().problem.contains("-5"));
        assert!(check_timeout("AdxlEngine::Disconnect", i32::MIN).is_some());
    }

    #[test]
    fn status_request() {
        assert!(check_status_req(Some(0x1000)).is_none());
        let f = check_status_req(Some(0)).unwrap();
        assert_eq!((f.rule, f.arg), (RuleId::AdxlStatusNullReq, "req"));
        assert_eq!(f.reject_code(), 503900);
        assert!(check_status_req(None).unwrap().problem.contains("reference"));
    }

    #[test]
    fn transfer_context() {
        let same = ThreadFacts { same_thread: true, init_ctx: Some(Some(1)), current_ctx: Some(Some(2)) };
        assert_eq!(check_xfer_context("AdxlEngine::TransferSync", &same), Ok(None));
        let set = ThreadFacts { same_thread: false, init_ctx: Some(Some(1)), current_ctx: Some(Some(1)) };
        assert_eq!(check_xfer_context("AdxlEngine::TransferSync", &set), Ok(None), "a worker that set the context");
        let other = ThreadFacts { same_thread: false, init_ctx: Some(Some(0x10)), current_ctx: Some(None) };
        let f = check_xfer_context("AdxlEngine::TransferSync", &other).unwrap().unwrap();
        assert_eq!(f.rule, RuleId::AdxlXferContext);
        assert!(f.problem.contains("(none)") || f.problem.contains("none"), "{}", f.problem);
        assert!(f.problem.contains("0x10") && f.fix.contains("aclrtSetCurrentContext"));
        let unknown = ThreadFacts { same_thread: false, init_ctx: None, current_ctx: Some(Some(1)) };
        assert_eq!(check_xfer_context("AdxlEngine::TransferSync", &unknown).unwrap_err().rule, RuleId::AdxlXferContext);
    }
}

//! Tests that need something of the machine.

/// For a test that needs something of the machine (root, huge pages, `mlock`, a tmpfs): when it
/// is missing, the test fails, naming what to provide, unless `REGCHECK_TEST_ALLOW_SKIP` lists
/// the test's name (comma-separated). Returns normally only for an allowed skip, after printing
/// it; the test then returns. The same rule as regcheck's own unit tests follow.
pub fn unavailable(test: &str, why: &str) {
    let allowed = std::env::var("REGCHECK_TEST_ALLOW_SKIP").unwrap_or_default();
    if allowed.split(',').any(|t| t.trim() == test) {
        eprintln!("SKIPPED {test}: {why} (allowed by REGCHECK_TEST_ALLOW_SKIP)");
        return;
    }
    panic!(
        "{test} cannot run here: {why}. Provide it (.ci/run shows how), or accept the skip with \
         REGCHECK_TEST_ALLOW_SKIP={test}"
    );
}

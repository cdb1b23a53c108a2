//! The C ABI surface.
//!
//! - [`acl`]: the ACL runtime's own function names (interposers; not in our header).
//! - [`hixl`]: the mangled `hixl::Hixl` members and `HixlCS*` functions (not in our header).
//! - [`api`]: regcheck's own `regcheck_*` API, declared in `include/regcheck.h`.
//!
//! Every exported function is thin: vendor-named ones call the front end, whose `run`
//! catches panics and forwards; `regcheck_*` ones wrap their body in [`boundary`].

/// cbindgen:ignore
pub mod acl;
pub mod api;
/// cbindgen:ignore
pub mod errmsg;
/// cbindgen:ignore
pub mod hixl;

use std::panic::{catch_unwind, AssertUnwindSafe};

/// The panic boundary of the `regcheck_*` API: runs `f`, and on a panic logs it and returns
/// `fallback`. No panic crosses into C.
pub(crate) fn boundary<T>(name: &str, fallback: T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(_) => {
            let _ = catch_unwind(|| log::error!(target: "regcheck", "internal failure in {name}; returning an error"));
            fallback
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every exported function goes through a panic boundary: `regcheck_*` functions call
    /// `boundary(`, vendor-named ones call the front end (whose `run` catches panics).
    #[test]
    fn every_export_has_a_panic_boundary() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/ffi");
        let mut checked = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let parts: Vec<&str> = text.split("extern \"C\" fn ").collect();
            for body in parts.iter().skip(1) {
                let name = body.split('(').next().unwrap();
                let start = body.find('{').unwrap();
                let first_stmt = &body[start..start + body[start..].find(';').unwrap_or(body.len() - start)];
                let guarded =
                    first_stmt.contains("boundary(") || first_stmt.contains("frontend::") || name.starts_with("fork_");
                assert!(guarded, "{}: {name} has no panic boundary", path.display());
                checked += 1;
            }
        }
        assert!(checked >= 10, "found only {checked} exports");
    }
}

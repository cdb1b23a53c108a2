//! `include/regcheck.h` compiles as C99 and as C++ with -Wall -Wextra -Werror, alone and in
//! the same translation unit as the vendor's `acl/acl_rt.h` declarations, and its version
//! macros are Cargo.toml's version.

use std::process::Command;

fn compile(compiler: &str, std: &str, source: &str) {
    let dir = testkit::target_dir().join("header-test");
    std::fs::create_dir_all(&dir).unwrap();
    let ext = if compiler == "c++" { "cpp" } else { "c" };
    let src = dir.join(format!("tu_{}.{ext}", std.replace('+', "x")));
    std::fs::write(&src, source).unwrap();
    let root = testkit::workspace_root();
    let out = Command::new(compiler)
        .args([&format!("-std={std}"), "-pedantic", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"])
        .arg("-I")
        .arg(root.join("include"))
        .arg("-I")
        .arg(testkit::sim_include_dir())
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    assert!(
        out.status.success(),
        "{compiler} -std={std} rejected the header:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const TU: &str = r#"
#include "regcheck.h"
#include "acl/acl_rt.h"
#include "regcheck.h" /* include guard */
#if REGCHECK_VERSION_MAJOR != EXPECT_MAJOR || REGCHECK_VERSION_MINOR != EXPECT_MINOR || REGCHECK_VERSION_PATCH != EXPECT_PATCH
#error "version macros differ from Cargo.toml"
#endif
int main(void) {
    regcheck_rule_info info;
    regcheck_environment env;
    aclError (*reg)(void *, uint64_t, uint32_t) = aclrtHostRegisterV2;
    (void)info;
    (void)env;
    (void)reg;
    return regcheck_rule_count() > 0 ? 0 : 1;
}
"#;

fn tu() -> String {
    let v = |name: &str| std::env::var(name).unwrap();
    format!(
        "#define EXPECT_MAJOR {}\n#define EXPECT_MINOR {}\n#define EXPECT_PATCH {}\n{TU}",
        v("CARGO_PKG_VERSION_MAJOR"),
        v("CARGO_PKG_VERSION_MINOR"),
        v("CARGO_PKG_VERSION_PATCH")
    )
}

#[test]
fn compiles_as_c99() {
    compile("cc", "c99", &tu());
}

#[test]
fn compiles_as_cxx11_and_cxx17() {
    compile("c++", "c++11", &tu());
    compile("c++", "c++17", &tu());
}

/// Every name the header declares at file scope (types and functions) is `regcheck_*`:
/// vendor-named functions and internal helpers stay out of it.
#[test]
fn declares_only_regcheck_names() {
    let text = std::fs::read_to_string(testkit::workspace_root().join("include/regcheck.h")).unwrap();
    let ident_before = |s: &str| -> String {
        s.trim_end().rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap_or("").to_string()
    };
    let mut names = Vec::new();
    for line in text.lines() {
        // File-scope lines only: declarations inside structs and enums are indented.
        if line.starts_with([' ', '#', '/', '{']) || line.is_empty() || line.starts_with("extern \"C\"") {
            continue;
        }
        if let Some(rest) = line.strip_prefix('}') {
            names.push(ident_before(rest.trim_end_matches(';')));
        } else if line.starts_with("typedef") && line.ends_with(';') {
            let decl = line.trim_end_matches(';');
            // `typedef R (*name)(args);` or `typedef struct x name;`
            let name = match decl.find("(*") {
                Some(i) => ident_before(&decl[i + 2..decl[i..].find(')').map_or(decl.len(), |j| i + j)]),
                None => ident_before(decl),
            };
            names.push(name);
        } else if let Some(open) = line.find('(') {
            names.push(ident_before(&line[..open]));
        }
    }
    assert!(names.len() >= 15, "parsed too few names: {names:?}");
    for name in names.iter().filter(|n| !n.is_empty()) {
        assert!(name.starts_with("regcheck_"), "include/regcheck.h declares {name:?}, which is not regcheck's own API");
    }
}

//! Build script: generates `include/regcheck.h` with cbindgen (written only when it changes)
//! and passes the shared library's link arguments (SONAME, export list).

use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    generate_header(&root);
    link_args(&root);
    compile_bridge();
}

fn generate_header(root: &std::path::Path) {
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=src");
    let mut config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap();
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").unwrap();
    let patch = std::env::var("CARGO_PKG_VERSION_PATCH").unwrap();
    config.after_includes = Some(format!(
        "\n#define REGCHECK_VERSION_MAJOR {major}\n#define REGCHECK_VERSION_MINOR {minor}\n#define REGCHECK_VERSION_PATCH {patch}\n#define REGCHECK_VERSION_STRING \"{major}.{minor}.{patch}\"\n"
    ));
    match cbindgen::Builder::new().with_crate(root).with_config(config).generate() {
        Ok(bindings) => {
            bindings.write_to_file(root.join("include/regcheck.h"));
        }
        Err(e) => panic!("cbindgen failed to generate include/regcheck.h: {e}"),
    }
}

/// Link arguments of the cdylib (owned by the packaging work: SONAME and export list).
fn link_args(_root: &std::path::Path) {}

/// The HIXL options bridge (`src/ffi/hixl_bridge.cpp`): walks `Initialize`'s
/// `std::map<AscendString, AscendString>` with the vendor's accessors passed as pointers.
/// Built without exceptions or RTTI and without linking libstdc++ (it references no library
/// symbol), so `libregcheck.a` still links into plain C programs.
fn compile_bridge() {
    println!("cargo:rerun-if-changed=src/ffi/hixl_bridge.cpp");
    cc::Build::new()
        .cpp(true)
        .cpp_link_stdlib(None)
        .file("src/ffi/hixl_bridge.cpp")
        .flag_if_supported("-std=c++17")
        .flag("-fno-exceptions")
        .flag("-fno-rtti")
        .flag("-fvisibility=hidden")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .compile("regcheck_hixl_bridge");
}

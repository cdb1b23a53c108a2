//! Build script: generates `include/regcheck.h` with cbindgen (written only when it changes)
//! and passes the shared library's link arguments (SONAME, export list), with the SONAME's
//! symlink in the build tree.

use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    generate_header(&root);
    link_args(&root);
    compile_bridge();
    dl_stubs();
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

/// Link arguments of the cdylib (see docs/packaging.md, "The shared library's SONAME and exports"): the
/// SONAME (`libregcheck.so.0.<minor>` before 1.0, `libregcheck.so.<major>` from 1.0 on) and
/// the export list `link/regcheck.map`. Only the cdylib gets them; the staticlib and the rlib
/// are untouched.
///
/// rustc already passes an anonymous version script of its own (its `#[no_mangle]` items,
/// everything else local). GNU ld refuses a second one ("anonymous version tag cannot be
/// combined with other version tags"); LLD merges them. So the cdylib is linked with LLD: the
/// toolchain's own `rust-lld` (what rustc uses by default on x86_64 Linux since 1.90, and what
/// it ships for other hosts), else an `ld.lld` on PATH. Without either, the export list falls
/// back to rustc's own (Rust-defined exports only) with a warning.
fn link_args(root: &std::path::Path) {
    println!("cargo:rerun-if-changed=link/regcheck.map");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap();
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").unwrap();
    let soversion = if major == "0" { format!("0.{minor}") } else { major };
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libregcheck.so.{soversion}");
    soname_link(&format!("libregcheck.so.{soversion}"));

    let map = root.join("link").join("regcheck.map");
    match lld_link_args() {
        Some(args) => {
            for arg in args {
                println!("cargo:rustc-cdylib-link-arg={arg}");
            }
            println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={}", map.display());
        }
        None => println!(
            "cargo:warning=no LLD found (neither rust-lld in the toolchain nor ld.lld on PATH): \
             libregcheck.so exports rustc's own list only, without link/regcheck.map"
        ),
    }
}

/// Programs linked with `-lregcheck` ask the loader for the SONAME, so the build tree needs a
/// file of that name beside `libregcheck.so`, as an installed tree has: a symlink
/// `<target>/release/libregcheck.so.<soversion> -> libregcheck.so`, made here (before the
/// library is linked; the link dangles until then). `OUT_DIR` is
/// `<target>/<profile>/build/regcheck-<hash>/out`.
fn soname_link(soname: &str) {
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else { return };
    let mut up = out_dir.ancestors();
    let (Some(build), Some(profile_dir)) = (up.nth(2), up.next()) else { return };
    if build.file_name().and_then(|n| n.to_str()) != Some("build") {
        println!("cargo:warning=unexpected OUT_DIR layout {}: no {soname} link made", out_dir.display());
        return;
    }
    // Only in `release`, the build users link against. Not in `debug`: `cargo test` puts
    // `target/debug` on the test processes' LD_LIBRARY_PATH, and the programs the tests start
    // would then load the debug library by its SONAME instead of the release one they were
    // linked and run against.
    if profile_dir.file_name().and_then(|n| n.to_str()) != Some("release") {
        return;
    }
    let link = profile_dir.join(soname);
    let target = std::path::Path::new("libregcheck.so");
    if std::fs::read_link(&link).ok().as_deref() == Some(target) {
        return;
    }
    let _ = std::fs::remove_file(&link);
    if let Err(e) = std::os::unix::fs::symlink(target, &link) {
        if std::fs::read_link(&link).ok().as_deref() != Some(target) {
            println!("cargo:warning=cannot make {} -> libregcheck.so: {e}", link.display());
        }
    }
}

/// The compiler-driver arguments that make the cdylib link with LLD, if LLD is available.
fn lld_link_args() -> Option<Vec<String>> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let host = std::env::var("HOST").ok()?;
    let sysroot = std::process::Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string());
    if let Some(sysroot) = sysroot {
        let gcc_ld = PathBuf::from(sysroot).join("lib/rustlib").join(host).join("bin/gcc-ld");
        if gcc_ld.join("ld.lld").exists() {
            return Some(vec![format!("-B{}", gcc_ld.display()), "-fuse-ld=lld".into()]);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).any(|dir| dir.join("ld.lld").exists()).then(|| vec!["-fuse-ld=lld".into()])
}

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

/// regcheck's `dlsym`, `dlvsym` and `dlopen` (`src/ffi/dl_stubs.S`, see src/ffi/dl.rs): linked
/// into the shared library only, as an object of its link (`rustc-cdylib-link-arg`). The
/// static library and the Rust library have none: a program linked with libregcheck.a keeps
/// the C library's own, and regcheck says its records may lack look-ups by name.
fn dl_stubs() {
    println!("cargo:rerun-if-changed=src/ffi/dl_stubs.S");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") || !matches!(arch.as_str(), "x86_64" | "aarch64")
    {
        return;
    }
    let objects = cc::Build::new().file("src/ffi/dl_stubs.S").compile_intermediates();
    for o in objects {
        println!("cargo:rustc-cdylib-link-arg={}", o.display());
    }
}

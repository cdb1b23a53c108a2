//! `cargo xtask install --prefix DIR` and `cargo xtask uninstall --prefix DIR`.
//!
//! The installed tree (docs/packaging.md):
//!
//! ```text
//! lib/libregcheck.so.<ver>                 the shared library (SONAME libregcheck.so.<soversion>)
//! lib/libregcheck.so.<soversion> -> libregcheck.so.<ver>
//! lib/libregcheck.so -> libregcheck.so.<soversion>
//! lib/libregcheck.a                        the static library
//! lib/libregcheck_audit.so                 the LD_AUDIT module (when its package exists)
//! bin/regcheck                             the command: run, doctor, rules, explain
//! bin/regcheck-run                         the launcher (alias of `regcheck run`)
//! include/regcheck.h                       the generated header
//! lib/cmake/regcheck/regcheckConfig.cmake, regcheckConfigVersion.cmake
//! lib/pkgconfig/regcheck.pc, regcheck-sim.pc
//! lib/regcheck/sim/lib{acl_rt,ascendcl,cann_hixl,llm_datadist,ascend_hal}.so   the simulator of the vendor libraries
//! lib/regcheck/sim/lib{runtime,hccl,ascendalog,c_sec,metadef}.so   its stand-ins for other vendor libraries
//! lib/regcheck/sim/libllm_datadist_py.so, python/llm_datadist/   the simulator's Python `llm_datadist`
//! lib/regcheck/sim/9.2.0/lib*.so            the same, as CANN 9.2.0 (the default root is 9.1.0: sim/README.md, "Release profiles")
//! include/regcheck/sim/...                 the headers to build against the simulator
//! share/doc/regcheck/README.md, docs/*.md    the guide
//! share/regcheck/install_manifest.txt      every installed path, relative to the prefix, then
//!                                          the directories the install created (`dir/`)
//! ```
//!
//! `uninstall` removes the listed files, then each directory an install created (the prefix
//! too, as `./`) that is left empty, deepest first; a directory that was there before, or that
//! holds anything else, stays.
//!
//! Nothing in the tree names the prefix (the CMake and pkg-config files derive it from their own
//! location; the simulator's libraries find each other through `$ORIGIN`), so it can be moved.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::artifacts::{build_release, Built};
use crate::templates::{expand, Expansion};
use crate::util::{package_field, Result, Version};

/// The manifest of installed files, relative to the prefix.
pub const MANIFEST: &str = "share/regcheck/install_manifest.txt";

const CONFIG_DIR: &str = "lib/cmake/regcheck";
const PATH_VARS: &[(&str, &str)] = &[
    ("INCLUDE_INSTALL_DIR", "include"),
    ("LIB_INSTALL_DIR", "lib"),
    ("SIM_INCLUDE_INSTALL_DIR", "include/regcheck/sim"),
    ("SIM_LIB_INSTALL_DIR", "lib/regcheck/sim"),
];

/// One thing to install, at a path relative to the prefix.
enum Item {
    Copy { from: PathBuf, mode: u32 },
    Write { contents: String },
    Symlink { target: String },
}

/// Builds (release) and installs everything into `prefix`.
pub fn install(prefix: &Path) -> Result<()> {
    let built = build_release(true, true)?;
    let plan = plan(prefix, &built)?;

    let (previous, mut created) = read_manifest(prefix).unwrap_or_default();
    // the directories an earlier install created that are still there
    created.retain(|dir| dir_of(prefix, dir).is_dir());
    let mut paths: Vec<&str> = plan.iter().map(|(rel, _)| rel.as_str()).collect();
    paths.push(MANIFEST);
    created.extend(missing_dirs(prefix, &paths));
    eprintln!("xtask: installing into {}", prefix.display());
    for (rel, item) in &plan {
        put(prefix, rel, item)?;
    }
    let installed: BTreeSet<String> = plan.iter().map(|(rel, _)| rel.clone()).collect();
    // files of an earlier install that this one no longer has
    for stale in previous.difference(&installed) {
        remove_installed(prefix, stale)?;
    }
    let manifest: String =
        installed.iter().map(|rel| format!("{rel}\n")).chain(created.iter().map(|d| format!("{d}\n"))).collect();
    put(prefix, MANIFEST, &Item::Write { contents: manifest })?;

    let version = crate_version()?;
    println!(
        "installed regcheck {} into {} ({} files; manifest: {})",
        version.full,
        prefix.display(),
        installed.len(),
        prefix.join(MANIFEST).display()
    );
    println!(
        "  CMake:      -DCMAKE_PREFIX_PATH={}   then find_package(regcheck 0.1 CONFIG REQUIRED)",
        prefix.display()
    );
    println!("  pkg-config: PKG_CONFIG_PATH={}", prefix.join("lib/pkgconfig").display());
    println!("  preload:    LD_PRELOAD={}", prefix.join("lib/libregcheck.so").display());
    println!("  or:         {} run [--audit] PROGRAM [ARGS...]", prefix.join("bin/regcheck").display());
    println!("  check:      {} doctor", prefix.join("bin/regcheck").display());
    Ok(())
}

/// Removes every file listed in `prefix`'s manifest, the manifest, and the directories of
/// regcheck's own that this leaves empty.
pub fn uninstall(prefix: &Path) -> Result<()> {
    let (listed, created) = read_manifest(prefix).ok_or_else(|| {
        format!("{} has no regcheck install manifest ({MANIFEST}): nothing to uninstall", prefix.display())
    })?;
    for rel in &listed {
        remove_installed(prefix, rel)?;
    }
    remove_installed(prefix, MANIFEST)?;
    // deepest first, so a parent is empty once its children are gone
    let mut dirs: Vec<&String> = created.iter().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(if d.as_str() == "./" { 0 } else { d.matches('/').count() }));
    let mut removed = 0;
    for dir in dirs {
        if fs::remove_dir(dir_of(prefix, dir)).is_ok() {
            removed += 1;
        }
    }
    println!(
        "removed regcheck from {} ({} files, {removed} of the {} directories the install created, the others are not empty)",
        prefix.display(),
        listed.len(),
        created.len()
    );
    Ok(())
}

/// The directory a manifest's `dir/` entry names (`./`: the prefix).
fn dir_of(prefix: &Path, entry: &str) -> PathBuf {
    match entry {
        "./" => prefix.to_path_buf(),
        dir => prefix.join(dir),
    }
}

/// The directories (relative to `prefix`, each ending in `/`; the prefix itself `./`) that do not
/// exist yet and putting `paths` would create.
fn missing_dirs(prefix: &Path, paths: &[&str]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if !prefix.is_dir() {
        out.insert("./".to_string());
    }
    for rel in paths {
        let mut dir = Path::new(rel).parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
            if !prefix.join(d).is_dir() {
                out.insert(format!("{}/", d.to_string_lossy()));
            }
            dir = d.parent();
        }
    }
    out
}

fn crate_version() -> Result<Version> {
    Version::parse(&package_field(&testkit::workspace_root().join("Cargo.toml"), "version")?)
}

/// Everything to install, in order (libraries before the links to them).
fn plan(prefix: &Path, built: &Built) -> Result<Vec<(String, Item)>> {
    let root = testkit::workspace_root();
    let version = crate_version()?;
    let description = package_field(&root.join("Cargo.toml"), "description")?;
    let so_file = format!("libregcheck.so.{}", version.full);
    let so_name = format!("libregcheck.so.{}", version.soversion());

    let mut plan: Vec<(String, Item)> = vec![
        (format!("lib/{so_file}"), Item::Copy { from: built.shared.clone(), mode: 0o755 }),
        (format!("lib/{so_name}"), Item::Symlink { target: so_file.clone() }),
        ("lib/libregcheck.so".into(), Item::Symlink { target: so_name }),
        ("lib/libregcheck.a".into(), Item::Copy { from: built.static_lib.clone(), mode: 0o644 }),
        ("include/regcheck.h".into(), Item::Copy { from: root.join("include/regcheck.h"), mode: 0o644 }),
    ];
    plan.push(("bin/regcheck".into(), Item::Copy { from: built.cli.clone(), mode: 0o755 }));
    plan.push(("bin/regcheck-run".into(), Item::Copy { from: built.runner.clone(), mode: 0o755 }));
    if let Some(audit) = &built.audit {
        plan.push(("lib/libregcheck_audit.so".into(), Item::Copy { from: audit.clone(), mode: 0o755 }));
    }
    for lib in testkit::sim_lib_files() {
        plan.push((format!("lib/regcheck/sim/{lib}"), Item::Copy { from: built.sim_lib_dir.join(lib), mode: 0o755 }));
    }
    for (release, dir) in &built.sim_release_dirs {
        for lib in testkit::sim_lib_files() {
            plan.push((format!("lib/regcheck/sim/{release}/{lib}"), Item::Copy { from: dir.join(lib), mode: 0o755 }));
        }
    }
    let sim_include = testkit::sim_include_dir();
    for header in files_under(&sim_include)? {
        let rel = header.strip_prefix(&sim_include).expect("under the sim include dir");
        plan.push((
            format!("include/regcheck/sim/{}", rel.to_string_lossy()),
            Item::Copy { from: header.clone(), mode: 0o644 },
        ));
    }
    // the simulator's Python package `llm_datadist` (ctypes over libllm_datadist_py.so, two
    // directories up): PYTHONPATH=<prefix>/lib/regcheck/sim/python
    let sim_python = testkit::sim_python_dir();
    for file in files_under(&sim_python)?.into_iter().filter(|f| f.extension().is_some_and(|e| e == "py")) {
        let rel = file.strip_prefix(&sim_python).expect("under the sim python dir");
        plan.push((
            format!("lib/regcheck/sim/python/{}", rel.to_string_lossy()),
            Item::Copy { from: file.clone(), mode: 0o644 },
        ));
    }

    for (rel, from) in doc_files()? {
        plan.push((format!("{DOC_DIR}/{rel}"), Item::Copy { from, mode: 0o644 }));
    }

    let cmake_libs: Vec<String> = built
        .native_static_libs
        .iter()
        .map(|flag| flag.strip_prefix("-l").map(str::to_string).unwrap_or_else(|| flag.clone()))
        .collect();
    let vars: Vec<(&str, String)> = vec![
        ("REGCHECK_VERSION", version.full.clone()),
        ("REGCHECK_VERSION_MAJOR", version.major.to_string()),
        ("REGCHECK_VERSION_MINOR", version.minor.to_string()),
        ("REGCHECK_SOVERSION", version.soversion()),
        ("REGCHECK_DESCRIPTION", description),
        ("REGCHECK_SIZEOF_VOID_P", std::mem::size_of::<usize>().to_string()),
        ("REGCHECK_HAS_AUDIT", if built.audit.is_some() { "TRUE" } else { "FALSE" }.to_string()),
        ("REGCHECK_NATIVE_STATIC_LIBS", built.native_static_libs.join(" ")),
        ("REGCHECK_NATIVE_STATIC_LIBS_CMAKE", cmake_libs.join(";")),
    ];
    for (template, dest_dir, dest_name) in [
        ("regcheckConfig.cmake.in", CONFIG_DIR, "regcheckConfig.cmake"),
        ("regcheckConfigVersion.cmake.in", CONFIG_DIR, "regcheckConfigVersion.cmake"),
        ("regcheck.pc.in", "lib/pkgconfig", "regcheck.pc"),
        ("regcheck-sim.pc.in", "lib/pkgconfig", "regcheck-sim.pc"),
    ] {
        let path = root.join("cmake").join(template);
        let text = fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let contents = expand(
            &text,
            &Expansion { input_name: template, install_dir: dest_dir, prefix, vars: &vars, path_vars: PATH_VARS },
        )?;
        plan.push((format!("{dest_dir}/{dest_name}"), Item::Write { contents }));
    }
    Ok(plan)
}

/// Where the guide is installed (findings, `regcheck explain` and `doctor` point there).
pub const DOC_DIR: &str = "share/doc/regcheck";

/// The guide: README.md and docs/*.md, as (path under [`DOC_DIR`], source file). The README's
/// links (`docs/usage.md`) resolve there as in the source tree.
pub(crate) fn doc_files() -> Result<Vec<(String, PathBuf)>> {
    let root = testkit::workspace_root();
    let mut out = vec![("README.md".to_string(), root.join("README.md"))];
    for file in files_under(&root.join("docs"))? {
        if file.extension().is_some_and(|e| e == "md") {
            let name = file.file_name().expect("a file name").to_string_lossy().into_owned();
            out.push((format!("docs/{name}"), file));
        }
    }
    Ok(out)
}

/// The regular files under `dir`, recursively, sorted.
pub(crate) fn files_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let entries = fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?.path();
        if path.is_dir() {
            out.extend(files_under(&path)?);
        } else if path.is_file() {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// Installs one item. Files are written beside their destination and renamed over it, so a
/// program running the old library keeps its copy.
fn put(prefix: &Path, rel: &str, item: &Item) -> Result<()> {
    let dest = prefix.join(rel);
    let dir = dest.parent().expect("an installed path has a parent");
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let name = dest.file_name().expect("an installed path has a name").to_string_lossy();
    let tmp = dir.join(format!(".{name}.xtask-{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    let written = match item {
        Item::Copy { from, mode } => fs::copy(from, &tmp)
            .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), tmp.display()))
            .and_then(|_| set_mode(&tmp, *mode)),
        Item::Write { contents } => fs::write(&tmp, contents)
            .map_err(|e| format!("cannot write {}: {e}", tmp.display()))
            .and_then(|_| set_mode(&tmp, 0o644)),
        Item::Symlink { target } => std::os::unix::fs::symlink(target, &tmp)
            .map_err(|e| format!("cannot create the link {} -> {target}: {e}", tmp.display())),
    };
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    fs::rename(&tmp, &dest).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        format!("cannot move {} to {}: {e}", tmp.display(), dest.display())
    })
}

fn set_mode(path: &Path, mode: u32) -> Result<()> {
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|e| format!("cannot set the mode of {}: {e}", path.display()))
}

/// The manifest's entries, if `prefix` has one: the installed files, and the directories an
/// install created (the entries ending in `/`).
fn read_manifest(prefix: &Path) -> Option<(BTreeSet<String>, BTreeSet<String>)> {
    let text = fs::read_to_string(prefix.join(MANIFEST)).ok()?;
    let entries = text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string);
    Some(entries.partition(|l| !l.ends_with('/')))
}

/// Removes an installed path (a file or a link; missing is fine), then each parent directory
/// that is empty and regcheck's own (a path with a `regcheck` component), up to the prefix.
fn remove_installed(prefix: &Path, rel: &str) -> Result<()> {
    if rel.starts_with('/') || rel.split('/').any(|c| c == "..") {
        return Err(format!("refusing to remove `{rel}`: not a path inside the prefix"));
    }
    let path = prefix.join(rel);
    match fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot remove {}: {e}", path.display())),
    }
    let mut dir = Path::new(rel).parent();
    while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
        if !d.components().any(|c| c.as_os_str() == "regcheck") || fs::remove_dir(prefix.join(d)).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}

//! `cargo xtask wheel [--out DIR]`: the `regcheck` Python wheel (docs/python.md).
//!
//! The wheel packs the files of one release build, the ones `cargo xtask install` installs,
//! with the same layout: the command as the wheel's scripts (the environment's `bin/`), the
//! libraries, the header and the simulator as its data (the environment's `lib/` and
//! `include/`), and the `regcheck` Python package (`python/regcheck`). scikit-build-core
//! packs them (`python/pyproject.toml`, `python/CMakeLists.txt`): it compiles nothing, so the
//! packed binaries are byte for byte those of the build.
//!
//! [`pack`] takes the built files ([`WheelInputs`]) and their architecture, so that a build
//! made elsewhere (a cross build's outputs) is packed the same way. The platform tag comes
//! from the packed ELF files: `manylinux_2_<Y>_<arch>` for the highest `GLIBC_2.<Y>` symbol
//! version they need (read with `readelf`, which reads any architecture's ELF files), raised
//! to what `auditwheel show` finds when the C++ runtime's symbol versions (`GLIBCXX_*`, from the
//! simulator's libraries) need a newer manylinux policy than glibc alone.
//!
//! The packing tools (scikit-build-core, wheel, auditwheel, and the CMake and Ninja that
//! scikit-build-core drives) live in a virtual environment under `<target>/wheel/tools`,
//! installed from PyPI with pip when missing (saying so): nothing of the machine's own is needed
//! beyond python3 with venv, so a machine without cmake (or make) packs the wheel too.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::artifacts::build_release;
use crate::util::{package_field, run_captured, run_visible, Result};

/// The Python packages the packing needs, installed into the tools environment: (package, the
/// import that proves it is there). scikit-build-core takes CMake from the `cmake` module before
/// `PATH`, and the build tool from the `ninja` module (else `make` on `PATH`), with the imports
/// named here: with both in the environment, the machine needs neither cmake nor make.
const TOOLS: &[(&str, &str)] = &[
    ("scikit-build-core", "import scikit_build_core"),
    ("wheel", "import wheel"),
    ("auditwheel", "import auditwheel"),
    ("cmake", "from cmake import CMAKE_BIN_DIR"),
    ("ninja", "from ninja import BIN_DIR"),
];

/// Everything a wheel carries, from one build.
#[derive(Clone, Debug)]
pub struct WheelInputs {
    /// The architecture of the files, as in platform tags: `x86_64`, `aarch64`.
    pub arch: String,
    /// `libregcheck.so`.
    pub shared: PathBuf,
    /// `libregcheck_audit.so`.
    pub audit: PathBuf,
    /// The `regcheck` command.
    pub cli: PathBuf,
    /// `regcheck-run`, the launcher (an alias of `regcheck run`).
    pub runner: PathBuf,
    /// `include/regcheck.h`.
    pub header: PathBuf,
    /// The simulator's library directory (`<target>/sim/lib`) and the files to take from it.
    pub sim_lib_dir: PathBuf,
    pub sim_lib_files: Vec<String>,
    /// The simulator's headers (`sim/include`).
    pub sim_include_dir: PathBuf,
}

/// `cargo xtask wheel [--out DIR] [--arch ARCH]`.
pub fn run(args: &[String]) -> Result<i32> {
    let mut out = testkit::target_dir().join("wheels");
    let mut arch = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (option, value) = match arg.split_once('=') {
            Some((o, v)) => (o, v.to_string()),
            None => (arg.as_str(), it.next().cloned().unwrap_or_default()),
        };
        if value.is_empty() {
            return Err(format!("{option} needs a value; usage: cargo xtask wheel [--out DIR] [--arch ARCH]"));
        }
        match option {
            "--out" => out = PathBuf::from(value),
            "--arch" => arch = Some(value),
            _ => {
                return Err(format!(
                    "unknown option `{arg}` for `wheel`; usage: cargo xtask wheel [--out DIR] [--arch ARCH]"
                ))
            }
        }
    }
    let wheel = match arch {
        Some(arch) if arch != std::env::consts::ARCH => {
            let prefix = crate::cross::prefix(&arch)?;
            if !prefix.join("lib/libregcheck.so").exists() {
                return Err(format!(
                    "no {arch} build in {}: run `cargo xtask cross {arch}` first (as root)",
                    prefix.display()
                ));
            }
            pack(&inputs_from_prefix(&prefix, &arch), &out)?
        }
        _ => build_host(&out)?,
    };
    println!("built {}", wheel.display());
    println!("  install: python3 -m pip install {}", wheel.display());
    println!("  then:    regcheck run --audit python3 app.py   or   regcheck run --audit pytest tests/");
    Ok(0)
}

/// The files of an install prefix (`cargo xtask install`'s layout; the cross build's
/// `target/cross/<arch>/prefix`), built for `arch`.
pub fn inputs_from_prefix(prefix: &Path, arch: &str) -> WheelInputs {
    WheelInputs {
        arch: arch.to_string(),
        shared: prefix.join("lib/libregcheck.so"),
        audit: prefix.join("lib/libregcheck_audit.so"),
        cli: prefix.join("bin/regcheck"),
        runner: prefix.join("bin/regcheck-run"),
        header: prefix.join("include/regcheck.h"),
        sim_lib_dir: prefix.join("lib/regcheck/sim"),
        sim_lib_files: testkit::sim_lib_files().iter().map(|s| s.to_string()).collect(),
        sim_include_dir: prefix.join("include/regcheck/sim"),
    }
}

/// Builds regcheck (release) and the simulator on this machine, then packs them into `out`.
pub fn build_host(out: &Path) -> Result<PathBuf> {
    let built = build_release(true, false)?;
    let audit = built.audit.clone().ok_or("the workspace has no regcheck-audit package: the wheel needs it")?;
    let inputs = WheelInputs {
        arch: std::env::consts::ARCH.to_string(),
        shared: built.shared,
        audit,
        cli: built.cli,
        runner: built.runner,
        header: testkit::workspace_root().join("include/regcheck.h"),
        sim_lib_dir: built.sim_lib_dir,
        sim_lib_files: testkit::sim_lib_files().iter().map(|s| s.to_string()).collect(),
        sim_include_dir: testkit::sim_include_dir(),
    };
    pack(&inputs, out)
}

/// Packs `inputs` into a wheel in `out`; returns its path.
pub fn pack(inputs: &WheelInputs, out: &Path) -> Result<PathBuf> {
    let work = testkit::target_dir().join("wheel").join(&inputs.arch);
    let stage = work.join("stage");
    if stage.exists() {
        fs::remove_dir_all(&stage).map_err(|e| format!("cannot remove {}: {e}", stage.display()))?;
    }
    let elf_files = stage_files(inputs, &stage)?;
    let glibc = max_glibc(&elf_files)?;
    eprintln!("xtask: the packed files need GLIBC_{}.{} at most", glibc.0, glibc.1);

    let python = tools_python(&testkit::target_dir().join("wheel/tools"))?;
    let built_dir = work.join("dist");
    if built_dir.exists() {
        fs::remove_dir_all(&built_dir).map_err(|e| format!("cannot remove {}: {e}", built_dir.display()))?;
    }
    let root = testkit::workspace_root();
    eprintln!("xtask: packing the wheel (scikit-build-core)");
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--disable-pip-version-check", "-w"])
        .arg(&built_dir)
        .arg(root.join("python"))
        .env("SKBUILD_CMAKE_DEFINE", format!("REGCHECK_STAGE_DIR={}", stage.display()))
        .env("SKBUILD_BUILD_DIR", work.join("build"));
    run_visible(&mut cmd)?;
    // scikit-build-core tags the wheel for this machine; name the packed files' architecture
    // before asking auditwheel (the files may come from another architecture's build).
    retag(&python, &single_wheel(&built_dir)?, &format!("linux_{}", inputs.arch))?;
    let plain = single_wheel(&built_dir)?;

    let mut show = Command::new(&python);
    show.args(["-m", "auditwheel", "show"]).arg(&plain);
    let shown = String::from_utf8_lossy(&run_captured(&mut show)?.stdout).into_owned();
    let policy = auditwheel_policy(&shown, &inputs.arch)
        .ok_or_else(|| format!("auditwheel show found no manylinux policy for the wheel:\n{shown}"))?;
    let tag = platform_tag(glibc.max(policy), &inputs.arch);
    eprintln!("xtask: auditwheel show: consistent with manylinux_{}_{}; platform tag {tag}", policy.0, policy.1);
    let Ceiling { glibc: (major, minor), glibcxx, cxxabi } = TAG_CEILING;
    if glibc.max(policy) > (major, minor) {
        return Err(format!(
            "the wheel would be {tag}, newer than manylinux_{major}_{minor} (what a glibc {major}.{minor} host such \
             as openEuler 22.03 LTS installs); these symbols of the packed files need more than glibc {major}.{minor}, \
             GLIBCXX_3.4.{glibcxx} or CXXABI_1.3.{cxxabi} (sim/src/portable.h says how the simulator avoids them):\n{}",
            symbols_above(&elf_files, TAG_CEILING)?.join("\n")
        ));
    }

    retag(&python, &plain, &tag)?;
    let tagged = single_wheel(&built_dir)?;

    let version = package_field(&root.join("Cargo.toml"), "version")?;
    let name = tagged.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let expected = format!("regcheck-{version}-py3-none-{tag}.whl");
    if name != expected {
        return Err(format!("the wheel is {name}, expected {expected} (version from Cargo.toml, tag from the files)"));
    }
    fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let dest = out.join(&name);
    fs::copy(&tagged, &dest).map_err(|e| format!("cannot copy {} to {}: {e}", tagged.display(), dest.display()))?;
    Ok(dest)
}

/// Replaces the platform tag of `wheel` (renamed in place) with `tag`.
fn retag(python: &Path, wheel: &Path, tag: &str) -> Result<()> {
    let mut cmd = Command::new(python);
    cmd.args(["-m", "wheel", "tags", "--remove", "--platform-tag", tag]).arg(wheel);
    run_captured(&mut cmd).map(|_| ())
}

/// Copies the files into the staged tree (the install prefix's layout); returns the ELF files.
fn stage_files(inputs: &WheelInputs, stage: &Path) -> Result<Vec<PathBuf>> {
    let mut copies: Vec<(PathBuf, String)> = vec![
        (inputs.cli.clone(), "bin/regcheck".into()),
        (inputs.runner.clone(), "bin/regcheck-run".into()),
        (inputs.shared.clone(), "lib/libregcheck.so".into()),
        (inputs.audit.clone(), "lib/libregcheck_audit.so".into()),
    ];
    // A program linked with -lregcheck asks the loader for the SONAME (libregcheck.so.0.1): an
    // installed prefix has it as a symbolic link, which a wheel cannot hold, so the wheel holds
    // a copy. A process that preloads libregcheck.so and also needs the SONAME loads it once:
    // the loader matches a needed name against the SONAMEs of what is loaded.
    let soname = soname(&inputs.shared)?;
    if soname != "libregcheck.so" {
        copies.push((inputs.shared.clone(), format!("lib/{soname}")));
    }
    copies.extend(inputs.sim_lib_files.iter().map(|f| (inputs.sim_lib_dir.join(f), format!("lib/regcheck/sim/{f}"))));
    let mut elf = Vec::new();
    for (from, rel) in &copies {
        let dest = stage.join(rel);
        copy(from, &dest, 0o755)?;
        elf.push(dest);
    }
    copy(&inputs.header, &stage.join("include/regcheck.h"), 0o644)?;
    for header in crate::install::files_under(&inputs.sim_include_dir)? {
        let rel = header.strip_prefix(&inputs.sim_include_dir).expect("under the sim include dir");
        copy(&header, &stage.join("include/regcheck/sim").join(rel), 0o644)?;
    }
    // the guide, where an install prefix has it (the environment's share/doc/regcheck)
    for (rel, from) in crate::install::doc_files()? {
        copy(&from, &stage.join(crate::install::DOC_DIR).join(rel), 0o644)?;
    }
    Ok(elf)
}

/// The SONAME of the shared library `lib` (`readelf -d`).
fn soname(lib: &Path) -> Result<String> {
    let mut cmd = Command::new("readelf");
    cmd.args(["-d", "--wide"]).arg(lib);
    let text = String::from_utf8_lossy(&run_captured(&mut cmd)?.stdout).into_owned();
    soname_in(&text).ok_or_else(|| format!("{} has no SONAME (readelf -d)", lib.display()))
}

/// The SONAME in `readelf -d` output: `... (SONAME)  Library soname: [libx.so.1]`.
fn soname_in(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.contains("(SONAME)"))?;
    let (_, rest) = line.split_once('[')?;
    Some(rest.split(']').next()?.to_string())
}

fn copy(from: &Path, to: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if let Some(dir) = to.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    fs::copy(from, to).map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))?;
    fs::set_permissions(to, fs::Permissions::from_mode(mode))
        .map_err(|e| format!("cannot set the mode of {}: {e}", to.display()))
}

/// The newest versions the wheels may need: glibc 2.34, and the C++ runtime of GCC 11
/// (GLIBCXX_3.4.29, CXXABI_1.3.13), as the manylinux_2_34 policy allows, so that they install
/// on glibc 2.34 hosts (openEuler 22.03 LTS, on many Kunpeng machines). [`pack`] fails, naming
/// the symbols, past it.
#[derive(Clone, Copy)]
struct Ceiling {
    glibc: (u32, u32),
    /// N of GLIBCXX_3.4.N.
    glibcxx: u32,
    /// N of CXXABI_1.3.N.
    cxxabi: u32,
}

const TAG_CEILING: Ceiling = Ceiling { glibc: (2, 34), glibcxx: 29, cxxabi: 13 };

/// The undefined symbols of `files` that need more than `ceiling`, as `file: symbol@VERSION`.
fn symbols_above(files: &[PathBuf], ceiling: Ceiling) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for file in files {
        let mut cmd = Command::new("readelf");
        cmd.args(["--dyn-syms", "--wide"]).arg(file);
        let text = String::from_utf8_lossy(&run_captured(&mut cmd)?.stdout).into_owned();
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for symbol in text.lines().filter(|l| l.contains(" UND ")).filter_map(|l| l.split_whitespace().nth(7)) {
            if version_above(symbol, ceiling) {
                out.push(format!("  {name}: {symbol}"));
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Whether `symbol@VERSION` (readelf's form) needs more than `ceiling`.
fn version_above(symbol: &str, ceiling: Ceiling) -> bool {
    let Some((_, version)) = symbol.split_once('@') else { return false };
    let version = version.trim_start_matches('@');
    let minor_above =
        |prefix: &str, max: u32| version.strip_prefix(prefix).is_some_and(|n| n.parse::<u32>().is_ok_and(|n| n > max));
    minor_above("GLIBCXX_3.4.", ceiling.glibcxx)
        || minor_above("CXXABI_1.3.", ceiling.cxxabi)
        || (version.starts_with("GLIBC_") && glibc_versions(version).into_iter().any(|v| v > ceiling.glibc))
}

/// The highest `GLIBC_<major>.<minor>` version the files need (`readelf -V`'s version needs).
fn max_glibc(files: &[PathBuf]) -> Result<(u32, u32)> {
    let mut max = (2, 17);
    for file in files {
        let mut cmd = Command::new("readelf");
        cmd.args(["-V", "--wide"]).arg(file);
        let out = run_captured(&mut cmd)?;
        if let Some(v) = glibc_versions(&String::from_utf8_lossy(&out.stdout)).into_iter().max() {
            max = max.max(v);
        }
    }
    Ok(max)
}

/// The `GLIBC_x.y` versions named in `readelf -V` or `objdump -T` output.
pub fn glibc_versions(text: &str) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("GLIBC_") {
        let rest = &text[i + "GLIBC_".len()..];
        let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let mut parts = rest[..end].split('.').map(|p| p.parse::<u32>());
        if let (Some(Ok(major)), Some(Ok(minor))) = (parts.next(), parts.next()) {
            out.push((major, minor));
        }
    }
    out
}

/// The glibc version of the manylinux tag `auditwheel show` says the wheel is consistent with.
pub fn auditwheel_policy(text: &str, arch: &str) -> Option<(u32, u32)> {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let (_, rest) = flat.split_once("consistent with the following platform tag: \"manylinux_")?;
    let tag = rest.split('"').next()?.strip_suffix(&format!("_{arch}"))?;
    let (major, minor) = tag.split_once('_')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// `manylinux_<major>_<minor>_<arch>` (PEP 600).
pub fn platform_tag(glibc: (u32, u32), arch: &str) -> String {
    format!("manylinux_{}_{}_{arch}", glibc.0, glibc.1)
}

/// The only `.whl` in `dir`.
fn single_wheel(dir: &Path) -> Result<PathBuf> {
    let wheels: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect();
    match wheels.as_slice() {
        [one] => Ok(one.clone()),
        other => Err(format!("expected one wheel in {}, found {}", dir.display(), other.len())),
    }
}

/// The Python of the packing tools' virtual environment at `venv`, created (`python3 -m venv`)
/// and given the [`TOOLS`] from PyPI when they are missing.
pub fn tools_python(venv: &Path) -> Result<PathBuf> {
    let python = venv.join("bin/python");
    if !python.is_file() {
        eprintln!("xtask: creating the packing tools' virtual environment {}", venv.display());
        run_visible(Command::new("python3").args(["-m", "venv"]).arg(venv))?;
    }
    let missing: Vec<&str> = TOOLS
        .iter()
        // Isolated (`-I`), from the environment's directory: the checkout's `cmake/` directory
        // would otherwise pass for the `cmake` module.
        .filter(|(_, import)| {
            !Command::new(&python)
                .current_dir(venv)
                .args(["-I", "-c", import])
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(|(package, _)| *package)
        .collect();
    if !missing.is_empty() {
        eprintln!("xtask: {} missing; installing from PyPI: pip install {}", missing.join(", "), missing.join(" "));
        let mut pip = Command::new(&python);
        pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]).args(&missing);
        run_visible(&mut pip).map_err(|e| format!("{e} (is PyPI reachable?)"))?;
    }
    Ok(python)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_soname() {
        let text = " 0x000000000000000e (SONAME)             Library soname: [libregcheck.so.0.1]\n";
        assert_eq!(soname_in(text).as_deref(), Some("libregcheck.so.0.1"));
        assert_eq!(soname_in(" 0x0000000000000001 (NEEDED) Shared library: [libc.so.6]\n"), None);
    }

    #[test]
    fn tells_the_symbols_above_the_ceiling() {
        let ceiling = TAG_CEILING;
        assert!(version_above("__isoc23_strtoul@GLIBC_2.38", ceiling));
        assert!(version_above("_ZSt21ios_base_library_initv@GLIBCXX_3.4.32", ceiling));
        assert!(!version_above("_ZSt28__throw_bad_array_new_lengthv@GLIBCXX_3.4.29", ceiling));
        assert!(!version_above("pthread_cond_clockwait@GLIBC_2.34", ceiling));
        assert!(!version_above("memcpy@GLIBC_2.2.5", ceiling));
        assert!(!version_above("regcheck_version", ceiling));
        assert!(version_above("_ZTVN10__cxxabiv117__class_type_infoE@CXXABI_1.3.15", ceiling));
        assert!(!version_above("__cxa_begin_catch@CXXABI_1.3", ceiling));
        assert!(!version_above("_ZTISt9exception@CXXABI_1.3.13", ceiling));
    }

    #[test]
    fn reads_glibc_versions_and_makes_the_tag() {
        let readelf =
            "  0x0010: Name: GLIBC_2.2.5  Flags: none  Version: 4\n  0x0020: Name: GLIBC_2.34  Flags: none\n \
                       Name: GLIBCXX_3.4.30 Name: GLIBC_PRIVATE";
        assert_eq!(glibc_versions(readelf), [(2, 2), (2, 34)]);
        assert_eq!(platform_tag((2, 34), "x86_64"), "manylinux_2_34_x86_64");
        let shown = "w.whl is consistent with\nthe following platform tag: \"manylinux_2_35_x86_64\".\n\nThe wheel";
        assert_eq!(auditwheel_policy(shown, "x86_64"), Some((2, 35)));
        assert_eq!(auditwheel_policy(shown, "aarch64"), None);
        assert_eq!(auditwheel_policy("consistent with the following platform tag: \"linux_x86_64\"", "x86_64"), None);
    }
}

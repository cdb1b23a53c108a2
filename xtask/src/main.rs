//! Project tasks, run as `cargo xtask <task>` (an alias in `.cargo/config.toml`).
//!
//! * `demo`: the README's main job (build, then run examples-c's demo bare and under regcheck);
//! * `install` / `uninstall`: the drop-in packaging (docs/packaging.md);
//! * `test`: the README's test command (`cargo test --workspace` once the tools are there);
//! * `mutants`: mutation testing of `src/rules` and `src/state` with `cargo mutants`;
//! * `bench`: what regcheck adds to each call, measured through the C ABI (docs/performance.md);
//! * `cross`: regcheck built for and tested on another architecture (docs/platforms.md);
//! * `wheel`: the `regcheck` Python wheel (docs/python.md);
//! * `differential`: the differential test over more seeds and longer sequences (docs/testing.md).

mod artifacts;
mod bench;
mod cross;
mod demo;
mod differential;
mod install;
mod machine;
mod mutants;
mod templates;
mod testcmd;
mod util;
mod wheel;

use std::path::PathBuf;

use util::Result;

const USAGE: &str = "\
usage: cargo xtask <task> [options]

tasks:
  demo                     build regcheck (release) and the simulator, then run the demo in
                           examples-c twice: bare, as on an old kernel (the vendor's codes and
                           the simulated crash), and under LD_PRELOAD=libregcheck.so
  install --prefix DIR     build (release) and install into DIR: libregcheck.so (with SONAME
                           links), libregcheck.a, regcheck.h, the CMake package, the pkg-config
                           files, the simulator's libraries and headers, a manifest
  uninstall --prefix DIR   remove what `install` put into DIR (from its manifest)
  test [--no-install] [ARGS...]
                           make sure the tools the tests use are there (cc, c++, cmake,
                           pkg-config, make, nm, objdump, valgrind; missing ones are installed, saying
                           so, unless --no-install), reserve the huge pages the hugetlb test
                           needs (as root, saying so; otherwise it says how), then run
                           `cargo test --workspace ARGS...`
  mutants [--no-install] [ARGS...]
                           mutation testing of src/rules and src/state: `cargo mutants` (installed
                           with `cargo install --locked cargo-mutants` when missing, saying so,
                           unless --no-install) with the unit tests; ARGS go to cargo mutants
  bench [--short] [--rounds N]
                           measure what regcheck adds to each call through the C ABI: a driver
                           program run bare and under LD_PRELOAD, against a stand-in vendor and
                           the simulator; prints the table of docs/performance.md
                           (--short: one quick round, only checks that it runs)
  cross aarch64 [--mirror URL] [--no-test]
                           (root) build regcheck, the audit module, the command and the
                           simulator for aarch64 in a Debian sid chroot with its cross
                           toolchain (made once under target/cross), compare the exports with
                           x86_64's, reserve the huge pages the hugetlb test needs (saying so),
                           then run the tests under qemu-aarch64; lists the tests
                           that cannot run there, with the reason, and the time taken
  wheel [--out DIR] [--arch aarch64]
                           build (release) and pack the Python wheel into DIR (default
                           <target>/wheels): the command, libregcheck.so, the LD_AUDIT module,
                           regcheck.h, the simulator, the `regcheck` Python module and pytest
                           plugin; tagged manylinux_2_Y for the newest GLIBC_2.Y the files need;
                           the packing tools (scikit-build-core, wheel, auditwheel, cmake,
                           ninja) are installed from PyPI into <target>/wheel/tools when
                           missing, saying so (no cmake or make needed); --arch aarch64
                           packs the build of `cross aarch64` instead
  differential [--seeds N] [--first S | --seed S] [--calls M] [--shrink K] [--print]
                           the differential test (tests/differential.rs) longer: N seeds
                           (default 16) from S (default 0) of M random ACL/HIXL calls each
                           (default 3000), run bare on the simulator, under LD_PRELOAD and
                           under `regcheck run --audit`, each step's code compared; a failure
                           is shrunk (at most K runs, default 200) and shown as a trace;
                           --print prints the sequences instead
  help                     print this text
";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            1
        }
    };
    std::process::exit(code);
}

fn run(args: &[String]) -> Result<i32> {
    let Some((task, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        return Ok(2);
    };
    match task.as_str() {
        "demo" => {
            no_more_args(task, rest)?;
            demo::run()
        }
        "install" => {
            install::install(&prefix_arg(task, rest)?)?;
            Ok(0)
        }
        "uninstall" => {
            install::uninstall(&prefix_arg(task, rest)?)?;
            Ok(0)
        }
        "test" => testcmd::run(rest),
        "mutants" => mutants::run(rest),
        "bench" => bench::run(rest),
        "cross" => cross::run(rest),
        "wheel" => wheel::run(rest),
        "differential" => differential::run(rest),
        "help" | "-h" | "--help" => {
            print!("{USAGE}");
            Ok(0)
        }
        other => {
            eprint!("xtask: unknown task `{other}`\n\n{USAGE}");
            Ok(2)
        }
    }
}

fn no_more_args(task: &str, rest: &[String]) -> Result<()> {
    match rest.first() {
        None => Ok(()),
        Some(arg) => Err(format!("`{task}` takes no argument (got `{arg}`); see `cargo xtask help`")),
    }
}

/// `--prefix DIR` or `--prefix=DIR` (the only option), made absolute against the current
/// directory.
fn prefix_arg(task: &str, rest: &[String]) -> Result<PathBuf> {
    let mut prefix = None;
    let mut it = rest.iter();
    while let Some(arg) = it.next() {
        let value = if arg == "--prefix" {
            it.next().ok_or_else(|| "--prefix needs a directory".to_string())?.clone()
        } else if let Some(v) = arg.strip_prefix("--prefix=") {
            v.to_string()
        } else {
            return Err(format!("unknown option `{arg}` for `{task}`; usage: cargo xtask {task} --prefix DIR"));
        };
        if value.is_empty() {
            return Err("--prefix needs a directory".into());
        }
        prefix = Some(PathBuf::from(value));
    }
    let prefix = prefix.ok_or_else(|| format!("usage: cargo xtask {task} --prefix DIR"))?;
    if prefix.is_absolute() {
        Ok(prefix)
    } else {
        let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
        Ok(cwd.join(prefix))
    }
}

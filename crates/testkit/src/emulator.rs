//! Running the tests for another architecture: under a user-mode emulator, with the programs
//! built by a cross compiler (`cargo xtask cross aarch64`, docs/platforms.md).
//!
//! Two settings of the test process choose it, both set by the cross task:
//!
//! * `TESTKIT_EMULATOR`: the emulator command line, words separated by spaces (for example
//!   `qemu-aarch64 -L /usr/aarch64-linux-gnu`). Every program a test starts through
//!   [`command`] (and so [`crate::Run`]) runs under it. The machine has no `binfmt_misc`
//!   registration, so a program of the other architecture cannot be started directly.
//!   The emulator passes its environment on to the program (`LD_PRELOAD`, `LD_AUDIT` and the
//!   `REGCHECK_*` settings reach the emulated loader, not the host's: the emulator is
//!   statically linked).
//! * `TESTKIT_TARGET`: the target triple regcheck is built for ([`crate::regcheck`] passes it
//!   on to cargo as `--target`, whose output is then under `<target>/<triple>/release`). The C
//!   and C++ compilers come from `$CC` and `$CXX`, as for every build here.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

/// The emulator's command line (`TESTKIT_EMULATOR`), or `None` when programs run natively.
pub fn emulator() -> Option<&'static [OsString]> {
    static WORDS: OnceLock<Vec<OsString>> = OnceLock::new();
    let words = WORDS.get_or_init(|| {
        std::env::var("TESTKIT_EMULATOR")
            .map(|v| v.split_whitespace().map(OsString::from).collect())
            .unwrap_or_default()
    });
    (!words.is_empty()).then_some(words.as_slice())
}

/// The target triple regcheck is cross-built for (`TESTKIT_TARGET`), if any.
pub fn cross_target() -> Option<String> {
    std::env::var("TESTKIT_TARGET").ok().filter(|t| !t.is_empty())
}

/// A command that runs the program `exe`: `exe` itself, or, when `exe` is a program of the
/// tested architecture and that runs under an emulator, the emulator with `exe` as its first
/// argument (see the module's text). The machine's own tools (`/bin/sh`, `python3`, a name
/// looked up on `PATH`) always run themselves.
pub fn command<S: AsRef<OsStr>>(exe: S) -> Command {
    let exe = exe.as_ref();
    match emulator() {
        Some(words) if is_target_program(Path::new(exe)) => wrapped(words, exe),
        _ => Command::new(exe),
    }
}

/// `EM_*` of the architecture this code is built for (`e_machine` in an ELF header).
const TARGET_MACHINE: u16 = if cfg!(target_arch = "x86_64") {
    62
} else if cfg!(target_arch = "aarch64") {
    183
} else {
    0
};

/// Whether `path` (a path, not a name to look up) is an ELF file of the architecture this code
/// is built for.
fn is_target_program(path: &Path) -> bool {
    if path.components().count() < 2 {
        return false;
    }
    elf_machine(path) == Some(TARGET_MACHINE)
}

/// The `e_machine` of an ELF file (little-endian: both targets are).
fn elf_machine(path: &Path) -> Option<u16> {
    let mut head = [0u8; 20];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).ok()?;
    (head[..4] == *b"\x7fELF").then(|| u16::from_le_bytes([head[18], head[19]]))
}

fn wrapped(emulator: &[OsString], exe: &OsStr) -> Command {
    match emulator.split_first() {
        Some((first, rest)) => {
            let mut cmd = Command::new(first);
            cmd.args(rest).arg(exe);
            cmd
        }
        None => Command::new(exe),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test binary is a program of the architecture it is built for (x86_64 natively,
    /// aarch64 under `cargo xtask cross aarch64`); a script is no ELF file.
    #[test]
    fn programs_of_the_tested_architecture_are_recognised() {
        assert_ne!(TARGET_MACHINE, 0, "no EM_ number for {}", std::env::consts::ARCH);
        assert!(is_target_program(&std::env::current_exe().unwrap()));
        let script = crate::target_dir().join("testkit").join("not-an-elf.sh");
        std::fs::create_dir_all(script.parent().unwrap()).unwrap();
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        assert!(!is_target_program(&script));
        assert!(!is_target_program(Path::new("python3")), "a name on PATH is the machine's tool");
    }

    #[test]
    fn without_an_emulator_the_program_runs_itself() {
        let cmd = wrapped(&[], OsStr::new("/bin/true"));
        assert_eq!(cmd.get_program(), "/bin/true");
        assert_eq!(cmd.get_args().count(), 0);
    }

    #[test]
    fn under_an_emulator_the_program_is_its_first_argument() {
        let words: Vec<OsString> = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"].map(OsString::from).into();
        let cmd = wrapped(&words, OsStr::new("/bin/true"));
        assert_eq!(cmd.get_program(), "qemu-aarch64");
        let args: Vec<&OsStr> = cmd.get_args().collect();
        assert_eq!(args, ["-L", "/usr/aarch64-linux-gnu", "/bin/true"]);
    }
}

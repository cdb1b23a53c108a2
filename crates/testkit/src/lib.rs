//! Test support for regcheck.
//!
//! * [`sim_lib_dir`] builds the simulator of the vendor libraries (`sim/`: `libacl_rt.so`,
//!   `libascendcl.so`, `libcann_hixl.so`) into `<target>/sim/lib`.
//! * [`regcheck`] builds regcheck itself (release) once per process.
//! * [`Program`] compiles a C or C++ test program against the simulator's headers and
//!   libraries, bare or with regcheck linked ahead of the vendor libraries.
//! * [`Scenarios`] builds one scenario program the three ways regcheck meets the vendor
//!   ([`Mode`]: `LD_PRELOAD`, `-lregcheck`, `libregcheck.a`).
//! * [`Run`] runs a program with a clean, traced simulator environment and returns an
//!   [`Outcome`] (exit status, stdout, stderr) with helpers to inspect the simulator's trace.
//!   A failure message shows the end of a long output ([`SHOWN_LINES`] lines at most) and
//!   names the file under `<target>/testkit/output/` that holds all of it.
//!
//! * [`command`] starts a program of the tested architecture: natively, or under the
//!   emulator when the tests run for another one ([`emulator`]; `cargo xtask cross`).
//! * [`unavailable`] fails a test that lacks something of the machine, unless
//!   `REGCHECK_TEST_ALLOW_SKIP` names it.
//!
//! Everything here is safe to call from many test threads and many test processes at once.

pub mod differential;
mod elf;
mod emulator;
mod make;
mod modes;
mod paths;
mod program;
mod run;
mod shown;
mod skip;
mod table;

pub use elf::soname;
pub use emulator::{command, cross_target, emulator};
pub use make::{
    asan_runtime, regcheck, release_dir, sim_lib_dir, sim_lib_dir_release, sim_lib_dir_sanitized, sim_lib_files,
    Regcheck, SANITIZE_FLAGS, SIM_RELEASES,
};
pub use modes::{Mode, Scenarios, MODES};
pub use paths::{sim_include_dir, sim_python_dir, target_dir, workspace_root};
pub use program::{Lang, Link, Program};
pub use run::{output_within, Outcome, Run, RunError};
pub use shown::{SHOWN_BYTES, SHOWN_LINES};
pub use skip::unavailable;
pub use table::{row_release, table_cells};

/// The library names of the simulator, for [`Program::libs`].
pub mod libs {
    /// Legacy ACL library name (what most applications link): `-lascendcl`.
    pub const ASCENDCL: &str = "ascendcl";
    /// Current ACL library name: `-lacl_rt`.
    pub const ACL_RT: &str = "acl_rt";
    /// HIXL library: `-lcann_hixl` (C++; also holds `ge::AscendString` in the simulator).
    pub const CANN_HIXL: &str = "cann_hixl";
    /// ADXL library: `-lllm_datadist` (C++; `adxl::AdxlEngine`, over `libcann_hixl.so`).
    pub const LLM_DATADIST: &str = "llm_datadist";
}

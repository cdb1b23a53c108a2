//! Compiling C and C++ test programs against the simulator.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::make::{
    cc, cxx, mtime, newest_under, regcheck, run_checked, sim_lib_dir, sim_lib_dir_release, sim_lib_dir_sanitized,
    FileLock, SANITIZE_FLAGS, SIM_RELEASES,
};
use crate::paths::{sim_include_dir, target_dir, workspace_root};

/// How a test program is linked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Link {
    /// Only the libraries named with [`Program::libs`] (the simulator's), no regcheck.
    Bare,
    /// `-lregcheck` (the cdylib) ahead of the vendor libraries.
    RegcheckShared,
    /// `libregcheck.a` ahead of the vendor libraries, plus the native libraries Rust needs.
    RegcheckStatic,
}

impl Link {
    /// The directory name under `<target>/testkit/` for programs linked this way.
    pub fn mode(self) -> &'static str {
        match self {
            Link::Bare => "bare",
            Link::RegcheckShared => "shared",
            Link::RegcheckStatic => "static",
        }
    }
}

/// The language of a test program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    /// C (`$CC` or `cc`, `-std=gnu11`).
    C,
    /// C++ (`$CXX` or `c++`, `-std=gnu++17`).
    Cxx,
}

/// Native libraries a Rust staticlib needs at link time.
const RUST_NATIVE_LIBS: &[&str] = &["-lstdc++", "-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl", "-lc"];

/// A C or C++ test program to build.
///
/// ```no_run
/// use testkit::{Link, Program};
/// let exe = Program::c("acl_codes", &["sim/tests/acl_codes.c"])
///     .link(Link::Bare)
///     .libs(&["ascendcl"])
///     .build();
/// ```
///
/// Compiled with `-Wall -Wextra -Werror -g -pthread -I sim/include -I <root>/include`, linked
/// with `-L <sim lib dir>` and an rpath to the simulator's and regcheck's library
/// directories. The executable is `<target>/testkit/<mode>/<name>` (mode: `bare`, `shared`,
/// `static`); it is rebuilt only when missing, older than a source, a header or a library it
/// uses, or built with another command line. Safe to build from many threads and processes.
#[derive(Clone, Debug)]
pub struct Program {
    name: String,
    lang: Lang,
    sources: Vec<PathBuf>,
    link: Link,
    libs: Vec<String>,
    defines: Vec<String>,
    flags: Vec<String>,
    includes: Vec<PathBuf>,
    sanitize: bool,
    release: Option<String>,
}

impl Program {
    /// A C program. Relative source paths are relative to the workspace root.
    pub fn c<P: AsRef<Path>>(name: &str, sources: &[P]) -> Program {
        Program::new(name, Lang::C, sources)
    }

    /// A C++ program. Relative source paths are relative to the workspace root.
    pub fn cxx<P: AsRef<Path>>(name: &str, sources: &[P]) -> Program {
        Program::new(name, Lang::Cxx, sources)
    }

    /// A program in `lang`. Relative source paths are relative to the workspace root.
    pub fn new<P: AsRef<Path>>(name: &str, lang: Lang, sources: &[P]) -> Program {
        let root = workspace_root();
        Program {
            name: name.to_string(),
            lang,
            sources: sources.iter().map(|s| root.join(s.as_ref())).collect(),
            link: Link::Bare,
            libs: vec!["ascendcl".to_string()],
            defines: Vec::new(),
            flags: Vec::new(),
            includes: Vec::new(),
            sanitize: false,
            release: None,
        }
    }

    /// How to link regcheck (default [`Link::Bare`]).
    pub fn link(mut self, link: Link) -> Program {
        self.link = link;
        self
    }

    /// The simulator libraries to link, in order, without `lib` and `.so`
    /// (default `["ascendcl"]`; e.g. `["acl_rt"]`, `["cann_hixl", "ascendcl"]`).
    pub fn libs(mut self, libs: &[&str]) -> Program {
        self.libs = libs.iter().map(|s| s.to_string()).collect();
        self
    }

    /// A preprocessor definition: `"NAME"` or `"NAME=VALUE"` (passed as `-DNAME...`).
    pub fn define(mut self, def: &str) -> Program {
        self.defines.push(def.to_string());
        self
    }

    /// An extra compiler or linker flag, e.g. `"-O2"` or `"-ldl"` (placed after the libraries).
    pub fn flag(mut self, flag: &str) -> Program {
        self.flags.push(flag.to_string());
        self
    }

    /// An extra include directory (searched after the simulator's and regcheck's).
    pub fn include<P: AsRef<Path>>(mut self, dir: P) -> Program {
        self.includes.push(workspace_root().join(dir.as_ref()));
        self
    }

    /// Build the program with AddressSanitizer and UndefinedBehaviorSanitizer
    /// ([`crate::SANITIZE_FLAGS`]) against the simulator built the same way
    /// ([`crate::sim_lib_dir_sanitized`]). Run under `LD_PRELOAD`, it needs
    /// [`crate::asan_runtime`] preloaded before libregcheck.so.
    pub fn sanitize(mut self) -> Program {
        self.sanitize = true;
        self
    }

    /// Build and link against the simulator's install root of a CANN release of
    /// [`crate::SIM_RELEASES`] ([`crate::sim_lib_dir_release`]) instead of the default root
    /// (9.1.0). Not with [`Program::sanitize`].
    pub fn release(mut self, release: &str) -> Program {
        assert!(SIM_RELEASES.contains(&release), "the simulator has no {release} install root");
        self.release = (release != SIM_RELEASES[0]).then(|| release.to_string());
        self
    }

    /// Where [`Program::build`] puts the executable.
    pub fn output_path(&self) -> PathBuf {
        let mut mode = if self.sanitize { format!("{}-asan", self.link.mode()) } else { self.link.mode().to_string() };
        if let Some(r) = &self.release {
            mode = format!("{mode}-{r}");
        }
        target_dir().join("testkit").join(mode).join(&self.name)
    }

    /// Builds the simulator (and regcheck, when linked) if needed, then the program if
    /// needed, and returns the executable's path.
    ///
    /// # Panics
    /// When a build fails, with the compiler's command line and output.
    pub fn build(&self) -> PathBuf {
        assert!(!(self.sanitize && self.release.is_some()), "{}: no sanitized simulator of a release root", self.name);
        let sim = match (&self.release, self.sanitize) {
            (Some(r), _) => sim_lib_dir_release(r),
            (None, true) => sim_lib_dir_sanitized(),
            (None, false) => sim_lib_dir(),
        };
        let rc = match self.link {
            Link::Bare => None,
            _ => Some(regcheck()),
        };
        let out = self.output_path();
        let dir = out.parent().expect("output has a parent").to_path_buf();
        fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));

        let args = self.command_args(&sim, rc.as_ref());
        let compiler = match self.lang {
            Lang::C => cc(),
            Lang::Cxx => cxx(),
        };
        let recipe = format!("{compiler:?} {args:?}");
        let recipe_file = dir.join(format!("{}.cmd", self.name));

        let _lock = FileLock::acquire(&dir.join(format!("{}.lock", self.name)));
        if self.up_to_date(&out, &recipe_file, &recipe, &sim, rc.as_ref()) {
            return out;
        }
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let tmp =
            dir.join(format!(".{}.tmp.{}.{}", self.name, std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed)));
        let mut cmd = Command::new(&compiler);
        cmd.arg("-o").arg(&tmp).args(&args);
        if let Err(msg) = run_checked(&mut cmd) {
            let _ = fs::remove_file(&tmp);
            panic!("building test program {} failed:\n{msg}", self.name);
        }
        fs::rename(&tmp, &out).unwrap_or_else(|e| panic!("cannot move {} to {}: {e}", tmp.display(), out.display()));
        fs::write(&recipe_file, recipe).unwrap_or_else(|e| panic!("cannot write {}: {e}", recipe_file.display()));
        out
    }

    fn command_args(&self, sim: &Path, rc: Option<&crate::Regcheck>) -> Vec<OsString> {
        let mut a: Vec<OsString> = Vec::new();
        let std = match self.lang {
            Lang::C => "-std=gnu11",
            Lang::Cxx => "-std=gnu++17",
        };
        for f in [std, "-g", "-O1", "-Wall", "-Wextra", "-Werror", "-pthread"] {
            a.push(f.into());
        }
        if self.sanitize {
            a.extend(SANITIZE_FLAGS.iter().map(OsString::from));
        }
        a.push("-I".into());
        a.push(sim_include_dir().into());
        a.push("-I".into());
        a.push(workspace_root().join("include").into());
        for inc in &self.includes {
            a.push("-I".into());
            a.push(inc.into());
        }
        for d in &self.defines {
            a.push(format!("-D{d}").into());
        }
        for s in &self.sources {
            a.push(s.into());
        }
        a.push("-Wl,--no-as-needed".into());
        let rc_dir = rc.map(|r| r.lib_dir.clone()).unwrap_or_else(crate::make::release_dir);
        match (self.link, rc) {
            (Link::RegcheckShared, Some(r)) => {
                a.push("-L".into());
                a.push(r.lib_dir.clone().into());
                a.push("-lregcheck".into());
            }
            (Link::RegcheckStatic, Some(r)) => a.push(r.static_lib.clone().into()),
            _ => {}
        }
        a.push("-L".into());
        a.push(sim.into());
        for l in &self.libs {
            a.push(format!("-l{l}").into());
        }
        if self.link == Link::RegcheckStatic {
            for l in RUST_NATIVE_LIBS {
                a.push((*l).into());
            }
        }
        let mut rpath = OsString::from("-Wl,-rpath,");
        rpath.push(sim);
        rpath.push(":");
        rpath.push(&rc_dir);
        a.push(rpath);
        for f in &self.flags {
            a.push(f.into());
        }
        a
    }

    fn up_to_date(
        &self,
        out: &Path,
        recipe_file: &Path,
        recipe: &str,
        sim: &Path,
        rc: Option<&crate::Regcheck>,
    ) -> bool {
        let Some(built) = mtime(out) else {
            return false;
        };
        if fs::read_to_string(recipe_file).ok().as_deref() != Some(recipe) {
            return false;
        }
        let mut inputs: Vec<PathBuf> = self.sources.clone();
        inputs.push(sim_include_dir());
        inputs.push(workspace_root().join("include"));
        inputs.push(sim.to_path_buf());
        inputs.extend(self.includes.iter().cloned());
        for s in &self.sources {
            if let Some(dir) = s.parent() {
                // headers beside the sources
                if let Ok(rd) = fs::read_dir(dir) {
                    for e in rd.flatten() {
                        let p = e.path();
                        let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("");
                        if matches!(ext, "h" | "hpp" | "hh" | "inc") {
                            inputs.push(p);
                        }
                    }
                }
            }
        }
        if let Some(r) = rc {
            inputs.push(match self.link {
                Link::RegcheckStatic => r.static_lib.clone(),
                _ => r.shared.clone(),
            });
        }
        inputs.iter().all(|p| newest_under(p).is_none_or(|t| t <= built))
    }
}

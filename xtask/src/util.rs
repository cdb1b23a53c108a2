//! Small helpers shared by the tasks.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Output};

/// Errors are messages for the user.
pub type Result<T> = std::result::Result<T, String>;

/// The cargo that runs us (`$CARGO`, set by `cargo run`), else `cargo`.
pub fn cargo() -> OsString {
    std::env::var_os("CARGO").filter(|v| !v.is_empty()).unwrap_or_else(|| "cargo".into())
}

/// Runs `cmd` with inherited stdio; an error names the command when it cannot start or fails.
pub fn run_visible(cmd: &mut Command) -> Result<()> {
    let shown = shown(cmd);
    let status = cmd.status().map_err(|e| format!("cannot run {shown}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("command failed ({status}): {shown}"))
    }
}

/// Runs `cmd` capturing its output; on failure the error carries the output.
pub fn run_captured(cmd: &mut Command) -> Result<Output> {
    let shown = shown(cmd);
    let out = cmd.output().map_err(|e| format!("cannot run {shown}: {e}"))?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(format!(
            "command failed ({}): {shown}\n--- stdout ---\n{}--- stderr ---\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// A command line as a user would type it.
pub fn shown(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for arg in cmd.get_args() {
        s.push(' ');
        s.push_str(&arg.to_string_lossy());
    }
    s
}

/// Whether this process runs as root (`id -u` is 0).
pub fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0").unwrap_or(false)
}

/// Whether `tool` answers `tool --version`.
pub fn have_tool(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().map(|o| o.status.success()).unwrap_or(false)
}

/// The value of `key = "value"` in the `[package]` table of the Cargo.toml at `manifest`.
pub fn package_field(manifest: &Path, key: &str) -> Result<String> {
    let text = std::fs::read_to_string(manifest).map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let mut in_package = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
            continue;
        }
        if !in_package {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            let v = v.trim();
            if k.trim() == key && v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
                return Ok(v[1..v.len() - 1].to_string());
            }
        }
    }
    Err(format!("no `{key} = \"...\"` in the [package] table of {}", manifest.display()))
}

/// A semantic version `MAJOR.MINOR.PATCH` (pre-release and build suffixes kept in `full`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    pub full: String,
    pub major: u64,
    pub minor: u64,
}

impl Version {
    pub fn parse(s: &str) -> Result<Version> {
        let core = s.split(['-', '+']).next().unwrap_or("");
        let parts: Vec<&str> = core.split('.').collect();
        let num = |i: usize| -> Result<u64> {
            parts.get(i).and_then(|p| p.parse().ok()).ok_or_else(|| format!("`{s}` is not a MAJOR.MINOR.PATCH version"))
        };
        if parts.len() != 3 {
            return Err(format!("`{s}` is not a MAJOR.MINOR.PATCH version"));
        }
        num(2)?;
        Ok(Version { full: s.to_string(), major: num(0)?, minor: num(1)? })
    }

    /// The version part of the SONAME: `0.MINOR` before 1.0, `MAJOR` from 1.0 on (the same
    /// rule as build.rs and the CMake version file).
    pub fn soversion(&self) -> String {
        if self.major == 0 {
            format!("0.{}", self.minor)
        } else {
            self.major.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soversion_follows_the_soname_policy() {
        assert_eq!(Version::parse("0.1.0").unwrap().soversion(), "0.1");
        assert_eq!(Version::parse("0.12.3").unwrap().soversion(), "0.12");
        assert_eq!(Version::parse("1.4.2").unwrap().soversion(), "1");
        assert_eq!(Version::parse("2.0.0-rc.1").unwrap().soversion(), "2");
        assert!(Version::parse("1.2").is_err());
        assert!(Version::parse("a.b.c").is_err());
    }

    #[test]
    fn reads_package_fields() {
        let dir = std::env::temp_dir().join(format!("xtask-util-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let manifest = dir.join("Cargo.toml");
        std::fs::write(
            &manifest,
            "[workspace]\nversion = \"9.9.9\"\n\n[package]\nname = \"regcheck\"\nversion = \"0.1.0\"\n\
             description = \"A = B\"\n[lib]\nversion = \"7\"\n",
        )
        .unwrap();
        assert_eq!(package_field(&manifest, "version").unwrap(), "0.1.0");
        assert_eq!(package_field(&manifest, "description").unwrap(), "A = B");
        assert!(package_field(&manifest, "license").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

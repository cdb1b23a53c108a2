//! Driver (HDK) versions: the `version.info` file and the version forms it holds.
//!
//! `<driver root>/version.info` holds `key=value` lines; the driver version is the `Version=`
//! line (`Version=25.3.rc1`, `Version=24.1.rc2.2`, `Version=25.5.0`). The driver root is
//! `/usr/local/Ascend/driver`, or the `Driver_Install_Path_Param=` directory of
//! `/etc/ascend_install.info` plus `/driver`.

use std::fmt;
use std::path::{Path, PathBuf};

/// Where the installer records the install directory.
pub const INSTALL_INFO_PATH: &str = "/etc/ascend_install.info";
/// The driver root used when the install info does not name one.
pub const DEFAULT_DRIVER_ROOT: &str = "/usr/local/Ascend/driver";

/// Pre-release stage; ordered alpha < beta < rc < release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// `X.Y.alphaN`
    Alpha(u32),
    /// `X.Y.betaN`
    Beta(u32),
    /// `X.Y.rcN`
    Rc(u32),
    /// `X.Y.Z`
    Release,
}

/// An HDK version (`25.3.rc1`, `24.1.rc2.2`, `25.5.0`, `25.5.0.1`, `25.5.alpha1` ...).
///
/// The derived order compares `major`, `minor`, `stage`, `patch`, `build` in that order, so
/// `25.5.alpha1 < 25.5.beta1 < 25.5.rc1 < 25.5.0 < 25.5.0.1 < 25.5.1` and
/// `24.1.rc2 < 24.1.rc2.2`. Pre-release versions have `patch == 0`; `build` is the optional
/// 4th component (0 when absent, so `25.5.0.0 == 25.5.0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HdkVersion {
    pub major: u32,
    pub minor: u32,
    pub stage: Stage,
    pub patch: u32,
    pub build: u32,
}

/// A component made only of ASCII digits (no sign, no spaces), as a `u32`.
fn number(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `prefix` followed by a number, with the prefix matched case-insensitively (`rc1`, `RC1`).
fn prefixed_number(s: &str, prefix: &str) -> Option<u32> {
    let head = s.get(..prefix.len())?;
    if !head.eq_ignore_ascii_case(prefix) {
        return None;
    }
    number(&s[prefix.len()..])
}

impl HdkVersion {
    /// Parse `X.Y.Z`, `X.Y.Z.M`, `X.Y.rcN`, `X.Y.rcN.M`, `X.Y.alphaN[.M]`, `X.Y.betaN[.M]`.
    /// The stage words are case-insensitive (`25.3.RC1`); surrounding whitespace is ignored.
    /// Anything else (missing parts, extra parts, signs, inner spaces) gives `None`.
    pub fn parse(s: &str) -> Option<HdkVersion> {
        let mut parts = s.trim().split('.');
        let major = number(parts.next()?)?;
        let minor = number(parts.next()?)?;
        let third = parts.next()?;
        let build = match parts.next() {
            Some(p) => number(p)?,
            None => 0,
        };
        if parts.next().is_some() {
            return None;
        }
        let (stage, patch) = if let Some(patch) = number(third) {
            (Stage::Release, patch)
        } else if let Some(n) = prefixed_number(third, "rc") {
            (Stage::Rc(n), 0)
        } else if let Some(n) = prefixed_number(third, "alpha") {
            (Stage::Alpha(n), 0)
        } else if let Some(n) = prefixed_number(third, "beta") {
            (Stage::Beta(n), 0)
        } else {
            return None;
        };
        Some(HdkVersion { major, minor, stage, patch, build })
    }

    /// The vendor's numeric form: `major*10^7 + minor*10^5 + patch*10^3`, minus 300/200/100
    /// for alpha/beta/rc, plus the pre-release number (`25.3.rc1` is 250_299_901,
    /// `25.5.0` is 250_500_000).
    ///
    /// The 4th component (`build`) has no place in this form and is ignored: `24.1.rc2` and
    /// `24.1.rc2.2` give the same number. Use the `Ord` of [`HdkVersion`] when the 4th
    /// component matters. The form is only order-preserving while minor < 100, patch < 100
    /// and pre-release numbers < 100, which holds for every published version.
    pub fn numeric(&self) -> u64 {
        let base = u64::from(self.major) * 10_000_000 + u64::from(self.minor) * 100_000 + u64::from(self.patch) * 1_000;
        let (minus, plus) = match self.stage {
            Stage::Alpha(n) => (300, n),
            Stage::Beta(n) => (200, n),
            Stage::Rc(n) => (100, n),
            Stage::Release => (0, 0),
        };
        (base + u64::from(plus)).saturating_sub(minus)
    }
}

impl fmt::Display for HdkVersion {
    /// The canonical text: lower-case stage words, the 4th component only when non-zero.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.", self.major, self.minor)?;
        match self.stage {
            Stage::Alpha(n) => write!(f, "alpha{n}")?,
            Stage::Beta(n) => write!(f, "beta{n}")?,
            Stage::Rc(n) => write!(f, "rc{n}")?,
            Stage::Release => write!(f, "{}", self.patch)?,
        }
        if self.build != 0 {
            write!(f, ".{}", self.build)?;
        }
        Ok(())
    }
}

impl std::str::FromStr for HdkVersion {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HdkVersion::parse(s).ok_or_else(|| format!("not an HDK version: {s:?}"))
    }
}

/// The value of the first non-empty `key=value` line whose key is `key` (ASCII
/// case-insensitive). Tolerates CRLF, a UTF-8 BOM, spaces around `=` and quotes around the
/// value.
fn key_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.lines().find_map(|line| {
        let (k, v) = line.split_once('=')?;
        if !k.trim().eq_ignore_ascii_case(key) {
            return None;
        }
        let v = v.trim();
        let v = v.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(v).trim();
        (!v.is_empty()).then_some(v)
    })
}

/// The `Version=` value of a `version.info` text. Other keys (`package_version=`,
/// `ascendhal_version=`, `Innerversion=` ...) are ignored; CRLF line ends, spaces around `=`
/// and quotes around the value are tolerated. `None` when there is no non-empty `Version=`.
pub fn parse_version_info(text: &str) -> Option<String> {
    key_value(text, "Version").map(str::to_owned)
}

/// The `Driver_Install_Path_Param=` value of an `ascend_install.info` text.
pub fn parse_install_path(text: &str) -> Option<PathBuf> {
    key_value(text, "Driver_Install_Path_Param").map(PathBuf::from)
}

/// Why one file gave no driver version.
#[derive(Debug, thiserror::Error)]
pub enum FileProblem {
    #[error("{} ({source})", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} (no {key}= line)", path.display())]
    NoKey { path: PathBuf, key: &'static str },
}

/// The driver version could not be read: every file tried, and why.
#[derive(Debug, thiserror::Error)]
#[error("driver version not found; tried: {}", .tried.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub struct DriverVersionError {
    pub tried: Vec<FileProblem>,
}

/// Read the installed driver's version: (the `Version=` string, the file it came from).
///
/// Tries `<Driver_Install_Path_Param>/driver/version.info` from `/etc/ascend_install.info`
/// first when present, then `/usr/local/Ascend/driver/version.info`. The error names every
/// path tried and why it failed.
pub fn read_driver_version() -> Result<(String, PathBuf), DriverVersionError> {
    read_driver_version_from(Path::new(INSTALL_INFO_PATH), Path::new(DEFAULT_DRIVER_ROOT))
}

/// [`read_driver_version`] with the install-info file and the default driver root given.
pub fn read_driver_version_from(
    install_info: &Path,
    default_root: &Path,
) -> Result<(String, PathBuf), DriverVersionError> {
    let mut tried = Vec::new();
    let mut candidates: Vec<PathBuf> = Vec::with_capacity(2);
    match std::fs::read_to_string(install_info) {
        Ok(text) => match parse_install_path(&text) {
            Some(dir) => candidates.push(dir.join("driver").join("version.info")),
            None => {
                tried.push(FileProblem::NoKey { path: install_info.to_path_buf(), key: "Driver_Install_Path_Param" })
            }
        },
        Err(source) => tried.push(FileProblem::Unreadable { path: install_info.to_path_buf(), source }),
    }
    let default = default_root.join("version.info");
    if !candidates.contains(&default) {
        candidates.push(default);
    }
    for path in candidates {
        match std::fs::read_to_string(&path) {
            Ok(text) => match parse_version_info(&text) {
                Some(version) => return Ok((version, path)),
                None => tried.push(FileProblem::NoKey { path, key: "Version" }),
            },
            Err(source) => tried.push(FileProblem::Unreadable { path, source }),
        }
    }
    Err(DriverVersionError { tried })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> HdkVersion {
        HdkVersion::parse(s).unwrap_or_else(|| panic!("{s:?} should parse"))
    }

    #[test]
    fn parses_all_forms() {
        let v = p("25.5.0");
        assert_eq!((v.major, v.minor, v.stage, v.patch, v.build), (25, 5, Stage::Release, 0, 0));
        let v = p("25.5.0.1");
        assert_eq!((v.stage, v.patch, v.build), (Stage::Release, 0, 1));
        let v = p("25.5.3");
        assert_eq!((v.stage, v.patch, v.build), (Stage::Release, 3, 0));
        let v = p("25.3.rc1");
        assert_eq!((v.major, v.minor, v.stage, v.patch), (25, 3, Stage::Rc(1), 0));
        let v = p("24.1.rc2.2");
        assert_eq!((v.stage, v.build), (Stage::Rc(2), 2));
        assert_eq!(p("25.5.alpha1").stage, Stage::Alpha(1));
        assert_eq!(p("25.5.beta3").stage, Stage::Beta(3));
        assert_eq!(p("25.3.RC1"), p("25.3.rc1"));
        assert_eq!(p("25.3.Rc1"), p("25.3.rc1"));
        assert_eq!(p("25.5.ALPHA2"), p("25.5.alpha2"));
        assert_eq!(p("  25.3.rc1 \r\n"), p("25.3.rc1"));
        assert_eq!(p("25.5.0.0"), p("25.5.0"));
    }

    #[test]
    fn rejects_garbage() {
        for s in [
            "",
            " ",
            "25",
            "25.5",
            "25.5.",
            "25..0",
            "25.5.rc",
            "25.5.rc1.",
            "25.5.0.1.2",
            "25.5.x1",
            "25.5.gamma1",
            "v25.5.0",
            "25.5.-1",
            "25.5.+1",
            "25. 5.0",
            "25.5.rc 1",
            "25.5.rc1a",
            "99999999999.5.0",
            "25,5,0",
        ] {
            assert_eq!(HdkVersion::parse(s), None, "{s:?}");
        }
    }

    #[test]
    fn orders_stages_and_builds() {
        assert!(p("25.5.alpha1") < p("25.5.alpha2"));
        assert!(p("25.5.alpha9") < p("25.5.beta1"));
        assert!(p("25.5.beta9") < p("25.5.rc1"));
        assert!(p("25.5.rc1") < p("25.5.rc2"));
        assert!(p("25.5.rc1") < p("25.5.0"));
        assert!(p("25.5.rc3.9") < p("25.5.0"));
        assert!(p("24.1.rc2") < p("24.1.rc2.2"));
        assert!(p("24.1.rc2.2") < p("24.1.rc3"));
        assert!(p("25.5.0") < p("25.5.0.1"));
        assert!(p("25.5.0.9") < p("25.5.1"));
        assert!(p("24.1.0") < p("25.3.rc1"));
        assert!(p("25.3.0") < p("25.5.alpha1"));
        assert!(p("9.9.9") < p("10.0.rc1"));
    }

    #[test]
    fn numeric_form() {
        assert_eq!(p("25.5.0").numeric(), 250_500_000);
        assert_eq!(p("25.3.rc1").numeric(), 250_299_901);
        assert_eq!(p("25.3.beta2").numeric(), 250_299_802);
        assert_eq!(p("25.3.alpha3").numeric(), 250_299_703);
        assert_eq!(p("24.1.rc2").numeric(), 240_099_902);
        assert_eq!(p("24.1.rc2.2").numeric(), p("24.1.rc2").numeric());
        assert_eq!(p("25.5.0.1").numeric(), p("25.5.0").numeric());
        assert_eq!(p("25.5.1").numeric(), 250_501_000);
        assert_eq!(p("0.0.alpha1").numeric(), 0);
        // Order-preserving (ignoring the 4th component) on ordinary versions.
        let sorted = [
            "24.1.rc2",
            "24.1.0",
            "25.3.alpha1",
            "25.3.beta1",
            "25.3.rc1",
            "25.3.rc2",
            "25.3.0",
            "25.3.1",
            "25.5.rc1",
            "25.5.0",
        ];
        for w in sorted.windows(2) {
            assert!(p(w[0]) < p(w[1]), "{w:?}");
            assert!(p(w[0]).numeric() < p(w[1]).numeric(), "{w:?}");
        }
    }

    #[test]
    fn display_round_trips() {
        for s in ["25.5.0", "25.5.0.1", "25.3.rc1", "24.1.rc2.2", "25.5.alpha1", "25.5.beta2", "25.5.12"] {
            assert_eq!(p(s).to_string(), s);
            assert_eq!(p(&p(s).to_string()), p(s));
        }
        assert_eq!(p(" 25.3.RC1 ").to_string(), "25.3.rc1");
        assert_eq!(p("25.5.0.0").to_string(), "25.5.0");
        assert_eq!("25.3.rc1".parse::<HdkVersion>(), Ok(p("25.3.rc1")));
        assert!("nope".parse::<HdkVersion>().is_err());
    }

    #[test]
    fn version_info_text() {
        let text = "package_version=1.0\r\nVersion = 25.3.rc1\r\nascendhal_version=7.35.23\r\n\
                    Innerversion=V100R001C23SPC001B220\r\n";
        assert_eq!(parse_version_info(text).as_deref(), Some("25.3.rc1"));
        assert_eq!(parse_version_info("Innerversion=V1\nVersion=24.1.rc2.2\n").as_deref(), Some("24.1.rc2.2"));
        assert_eq!(parse_version_info("\u{feff}Version=25.5.0").as_deref(), Some("25.5.0"));
        assert_eq!(parse_version_info("  Version=\"25.5.0\"  \n").as_deref(), Some("25.5.0"));
        assert_eq!(parse_version_info("Version=\nVersion=25.5.0\n").as_deref(), Some("25.5.0"));
        assert_eq!(parse_version_info("package_version=25.5.0\n"), None);
        assert_eq!(parse_version_info("Innerversion=25.5.0\n"), None);
        assert_eq!(parse_version_info("ascendhal_version=7.35\n"), None);
        assert_eq!(parse_version_info(""), None);
        assert_eq!(parse_version_info("Version 25.5.0\n"), None);
    }

    #[test]
    fn install_info_text() {
        let text = "UserName=HwHiAiUser\r\nUserGroup=HwHiAiUser\r\n\
                    Driver_Install_Path_Param= /opt/Ascend \r\nDriver_Install_Type=full\r\n";
        assert_eq!(parse_install_path(text), Some(PathBuf::from("/opt/Ascend")));
        assert_eq!(parse_install_path("UserName=x\n"), None);
    }

    /// A fresh directory under the target dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> TempDir {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("target")
                .join("platform-tests")
                .join(format!("hdk-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("create temp dir");
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn reads_from_install_path_first() {
        let tmp = TempDir::new("install");
        let custom = tmp.0.join("custom");
        std::fs::create_dir_all(custom.join("driver")).unwrap();
        std::fs::write(custom.join("driver/version.info"), "Version=25.5.0\nInnerversion=x\n").unwrap();
        let default_root = tmp.0.join("default/driver");
        std::fs::create_dir_all(&default_root).unwrap();
        std::fs::write(default_root.join("version.info"), "Version=24.1.rc2\n").unwrap();
        let info = tmp.0.join("ascend_install.info");
        std::fs::write(&info, format!("Driver_Install_Path_Param={}\r\n", custom.display())).unwrap();

        let (v, path) = read_driver_version_from(&info, &default_root).unwrap();
        assert_eq!(v, "25.5.0");
        assert_eq!(path, custom.join("driver/version.info"));

        // The install path's file lacks Version=: fall back to the default root.
        std::fs::write(custom.join("driver/version.info"), "package_version=1\n").unwrap();
        let (v, path) = read_driver_version_from(&info, &default_root).unwrap();
        assert_eq!(v, "24.1.rc2");
        assert_eq!(path, default_root.join("version.info"));

        // No install info at all: the default root.
        let (v, _) = read_driver_version_from(&tmp.0.join("missing.info"), &default_root).unwrap();
        assert_eq!(v, "24.1.rc2");
    }

    #[test]
    fn error_names_every_path() {
        let tmp = TempDir::new("missing");
        let info = tmp.0.join("ascend_install.info");
        let custom = tmp.0.join("custom");
        std::fs::write(&info, format!("Driver_Install_Path_Param={}\n", custom.display())).unwrap();
        let default_root = tmp.0.join("default/driver");
        let err = read_driver_version_from(&info, &default_root).unwrap_err().to_string();
        assert!(err.contains(&custom.join("driver/version.info").display().to_string()), "{err}");
        assert!(err.contains(&default_root.join("version.info").display().to_string()), "{err}");

        let missing_info = tmp.0.join("nope.info");
        let err = read_driver_version_from(&missing_info, &default_root).unwrap_err().to_string();
        assert!(err.contains(&missing_info.display().to_string()), "{err}");
        assert!(err.contains(&default_root.join("version.info").display().to_string()), "{err}");

        // Install info without the key.
        std::fs::write(&info, "UserName=x\n").unwrap();
        let err = read_driver_version_from(&info, &default_root).unwrap_err();
        assert!(matches!(&err.tried[0], FileProblem::NoKey { key: "Driver_Install_Path_Param", .. }), "{err}");
    }

    #[test]
    fn real_machine_reads_the_documented_paths() {
        // What the real files say, found independently of the reader.
        let default = Path::new(DEFAULT_DRIVER_ROOT).join("version.info");
        let from_install_info = std::fs::read_to_string(INSTALL_INFO_PATH)
            .ok()
            .and_then(|t| parse_install_path(&t))
            .map(|d| d.join("driver").join("version.info"));
        let present: Vec<PathBuf> = from_install_info
            .into_iter()
            .chain([default.clone()])
            .filter(|p| std::fs::read_to_string(p).ok().and_then(|t| parse_version_info(&t)).is_some())
            .collect();
        match (read_driver_version(), present.first()) {
            (Ok((version, path)), Some(first)) => {
                assert_eq!(&path, first);
                assert_eq!(Some(version), parse_version_info(&std::fs::read_to_string(first).unwrap()));
            }
            (Err(e), None) => {
                // the error names every path tried, and why
                let e = e.to_string();
                assert!(e.starts_with("driver version not found; tried: "), "{e}");
                assert!(e.contains(INSTALL_INFO_PATH), "{e}");
                assert!(e.contains(&default.display().to_string()), "{e}");
            }
            (got, expected) => panic!("read_driver_version() gave {got:?}, the files say {expected:?}"),
        }
    }
}

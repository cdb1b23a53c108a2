//! The CANN release regcheck runs on, and the profile of expectations keyed on it.
//!
//! The same call gets different answers from different CANN releases (docs/usage.md,
//! "Release profiles"): every release-dependent expectation takes a [`Profile`] as input.
//!
//! Where the release comes from, first that answers: `REGCHECK_CANN_VERSION`; the vendor's own
//! answer (`aclsysGetVersionStr("runtime")`, which reads `$ASCEND_HOME_PATH/share/info/runtime/
//! version.info`, hicann/runtime `src/acl/aclrt_impl/acl.cpp`); that file under the vendor's
//! install roots. When none answers, the profile of the release users run (9.1.0) is
//! *assumed*, and nothing that needs certainty is decided from it.

use std::fmt;
use std::path::{Path, PathBuf};

/// The release users run (CANN 9.1.0, tag v9.1.0 of hicann/runtime and hicann/hixl): the
/// profile assumed when regcheck cannot tell.
/// cbindgen:ignore
pub const ASSUMED: CannRelease = CannRelease { major: 9, minor: 1, patch: 0 };

/// Where a runtime package's version file lies under an install root (the vendor's
/// `kRelPathInfo` + package + `/version.info`).
pub const RUNTIME_VERSION_FILE: &str = "share/info/runtime/version.info";

/// A CANN release line as far as the profiles need it: `major.minor.patch` (a pre-release
/// `9.2.0-beta.2`, `8.0.RC3` or `8.5.0.beta.1` counts as its line: 9.2, 8.0, 8.5).
/// cbindgen:ignore
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CannRelease {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl CannRelease {
    /// `X.Y` then optionally `.Z` (digits) or a pre-release part; surrounding space ignored.
    /// `None` for anything without two leading numbers.
    pub fn parse(s: &str) -> Option<CannRelease> {
        let s = s.trim();
        let mut parts = s.splitn(3, '.');
        let num = |p: &str| (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())).then(|| p.parse().ok()).flatten();
        let major = num(parts.next()?)?;
        let minor = num(parts.next()?)?;
        let patch = match parts.next() {
            None => 0,
            Some(rest) => {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if digits.is_empty() {
                    0
                } else {
                    digits.parse().ok()?
                }
            }
        };
        Some(CannRelease { major, minor, patch })
    }

    /// After 9.1: the vendor's master (9.2.0 betas and later).
    pub fn after_9_1(self) -> bool {
        (self.major, self.minor) > (9, 1)
    }
}

impl fmt::Display for CannRelease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// How `aclrtHostRegisterV2` registers host memory (hicann/runtime `ApiImpl::HostRegisterV2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegPath {
    /// The runtime's own process-wide tables: the overlap is checked there first, PINNED is
    /// stripped before the driver call, a PINNED-only registration never reaches the driver,
    /// V1 `aclrtHostRegister` goes to the driver without reading the tables. Every release up
    /// to 9.1.0; on later ones, a driver without the pinned-register feature.
    Tables,
    /// The driver does everything (`FEATURE_SVM_MEM_REGISTER_HOST_PINNED`, runtime master
    /// 71a3ea667): PINNED is the driver's DMA mapping, a duplicate's `DRV_ERROR_BUSY` is 507910.
    Driver,
    /// Not known: a release after 9.1 whose driver's feature regcheck could not ask, or an
    /// assumed release.
    Unknown,
}

impl RegPath {
    pub fn describe(self) -> &'static str {
        match self {
            RegPath::Tables => "the runtime's tables (a PINNED-only registration never reaches the driver)",
            RegPath::Driver => "the driver's pin/unpin (FEATURE_SVM_MEM_REGISTER_HOST_PINNED)",
            RegPath::Unknown => "unknown (the runtime's tables or the driver's pin/unpin)",
        }
    }
}

/// The registration path from what is known: the release (`None`: assumed, not known) and the
/// driver's pinned-register feature (`None`: not asked). Releases up to 9.1 have no driver
/// path at all; later ones ask the driver.
pub fn reg_path(release: Option<CannRelease>, pin_feature: Option<bool>) -> RegPath {
    match (release, pin_feature) {
        (Some(r), _) if !r.after_9_1() => RegPath::Tables,
        (Some(_), Some(true)) => RegPath::Driver,
        (Some(_), Some(false)) => RegPath::Tables,
        (Some(_), None) | (None, _) => RegPath::Unknown,
    }
}

/// Where the release came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `REGCHECK_CANN_VERSION`.
    Override,
    /// The vendor's `aclsysGetVersionStr("runtime")`.
    Vendor,
    /// A version file.
    File(PathBuf),
    /// Nothing answered: why, for the message.
    Assumed(String),
}

/// The release profile: every release-dependent expectation is a pure function of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The release the expectations follow (the assumed one when `source` is `Assumed`).
    pub release: CannRelease,
    /// The text it was read from (empty when assumed).
    pub text: String,
    pub source: Source,
    /// The driver's pinned-register feature, when it could be asked.
    pub pin_feature: Option<bool>,
}

impl Profile {
    pub fn known(text: &str, source: Source) -> Option<Profile> {
        let release = CannRelease::parse(text)?;
        Some(Profile { release, text: text.trim().to_string(), source, pin_feature: None })
    }

    pub fn assumed(why: String) -> Profile {
        Profile { release: ASSUMED, text: String::new(), source: Source::Assumed(why), pin_feature: None }
    }

    /// Whether the release was read (not assumed).
    pub fn is_known(&self) -> bool {
        !matches!(self.source, Source::Assumed(_))
    }

    /// The host-registration path, from what is known (never from the assumption).
    pub fn reg_path(&self) -> RegPath {
        reg_path(self.is_known().then_some(self.release), self.pin_feature)
    }

    /// `adxl::AdxlEngine::ExportToShareableHandle` exists (hixl 6d1c2b6: after 9.1.0).
    pub fn has_export_to_shareable_handle(&self) -> bool {
        self.release.after_9_1()
    }

    /// `GetCapability` of an unknown feature: 103905 (UNSUPPORTED) on 9.1.0, SUCCESS with
    /// value 0 after (hixl 8687917).
    pub fn unknown_capability_code(&self) -> u32 {
        if self.release.after_9_1() {
            0
        } else {
            103905
        }
    }

    /// Ascend 950 with no options: hixl_cs after 9.1.0 (hixl bb0d0f6), the comm engine on 9.1.0.
    pub fn ascend950_default_is_hixl_cs(&self) -> bool {
        self.release.after_9_1()
    }

    /// `JsonToNumber` refuses non-integer option values after 9.1.0 (hixl 1577fcd).
    pub fn json_options_integer_only(&self) -> bool {
        self.release.after_9_1()
    }

    /// One line for logs and `regcheck doctor`: the release, where from, the path.
    pub fn describe(&self) -> String {
        let from = match &self.source {
            Source::Override => "REGCHECK_CANN_VERSION".to_string(),
            Source::Vendor => "the vendor's aclsysGetVersionStr(\"runtime\")".to_string(),
            Source::File(p) => p.display().to_string(),
            Source::Assumed(why) => format!("assumed, the release users run: {why}"),
        };
        let rel =
            if self.is_known() { format!("{} ({:?})", self.release, self.text) } else { self.release.to_string() };
        let feature = match self.pin_feature {
            Some(true) => "; the driver has the pinned-register feature",
            Some(false) => "; the driver lacks the pinned-register feature",
            None => "",
        };
        format!("CANN {rel} from {from}{feature}; host registration path: {}", self.reg_path().describe())
    }
}

/// The `Version=` value of a version.info text (the vendor's `kVersionInfoKey`: the first line
/// holding it; the value trimmed).
pub fn parse_version_info(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.contains("Version="))?;
    let v = line[line.find("Version=")? + "Version=".len()..].trim();
    (!v.is_empty()).then(|| v.to_string())
}

/// The runtime version file under each root, in order.
pub fn version_files(roots: &[PathBuf]) -> Vec<PathBuf> {
    roots.iter().map(|r| r.join(RUNTIME_VERSION_FILE)).collect()
}

/// The first version file that holds a release: its text and path.
pub fn read_version_file(files: &[PathBuf]) -> Option<(String, PathBuf)> {
    files.iter().find_map(|p: &PathBuf| {
        let text = std::fs::read_to_string(Path::new(p)).ok()?;
        let v = parse_version_info(&text)?;
        CannRelease::parse(&v).map(|_| (v, p.clone()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_parse_to_their_line() {
        let r = |s| CannRelease::parse(s).map(|r| (r.major, r.minor, r.patch));
        assert_eq!(r("9.1.0"), Some((9, 1, 0)));
        assert_eq!(r(" 9.2.0-beta.2\n"), Some((9, 2, 0)));
        assert_eq!(r("8.0.RC3"), Some((8, 0, 0)));
        assert_eq!(r("8.5.0.beta.1"), Some((8, 5, 0)));
        assert_eq!(r("9.1"), Some((9, 1, 0)));
        for bad in ["", "9", "banana", "9.x.0", "-9.1.0"] {
            assert_eq!(r(bad), None, "{bad:?}");
        }
        assert!(!CannRelease::parse("9.1.5").unwrap().after_9_1());
        assert!(CannRelease::parse("9.2.0-beta.2").unwrap().after_9_1());
        assert!(CannRelease::parse("10.0.0").unwrap().after_9_1());
    }

    #[test]
    fn the_path_is_known_only_from_what_is_known() {
        let v910 = CannRelease::parse("9.1.0");
        let v920 = CannRelease::parse("9.2.0");
        assert_eq!(reg_path(v910, None), RegPath::Tables, "9.1.0 has no driver path");
        assert_eq!(reg_path(v910, Some(true)), RegPath::Tables, "9.1.0 never asks the driver");
        assert_eq!(reg_path(CannRelease::parse("8.5.0"), None), RegPath::Tables);
        assert_eq!(reg_path(v920, Some(true)), RegPath::Driver);
        assert_eq!(reg_path(v920, Some(false)), RegPath::Tables);
        assert_eq!(reg_path(v920, None), RegPath::Unknown, "the feature was not asked");
        assert_eq!(reg_path(None, Some(true)), RegPath::Unknown, "an assumed release decides nothing");
        let p = Profile::assumed("no version file".into());
        assert_eq!((p.release, p.reg_path()), (ASSUMED, RegPath::Unknown));
        assert!(p.describe().contains("assumed"), "{}", p.describe());
        let p = Profile::known("9.1.0", Source::Override).unwrap();
        assert_eq!(p.reg_path(), RegPath::Tables);
        assert!(p.describe().contains("REGCHECK_CANN_VERSION"), "{}", p.describe());
    }

    #[test]
    fn release_differences_follow_the_profile() {
        let p910 = Profile::known("9.1.0", Source::Vendor).unwrap();
        let p920 = Profile::known("9.2.0", Source::Vendor).unwrap();
        assert!(!p910.has_export_to_shareable_handle() && p920.has_export_to_shareable_handle());
        assert_eq!((p910.unknown_capability_code(), p920.unknown_capability_code()), (103905, 0));
        assert!(!p910.ascend950_default_is_hixl_cs() && p920.ascend950_default_is_hixl_cs());
        assert!(!p910.json_options_integer_only() && p920.json_options_integer_only());
    }

    #[test]
    fn version_info_gives_its_version_line() {
        let text = "package_name=runtime\nVersion=9.1.0\nversion_dir=9.1.0\n";
        assert_eq!(parse_version_info(text).as_deref(), Some("9.1.0"));
        assert_eq!(parse_version_info("Version=  \n"), None);
        assert_eq!(parse_version_info("version=9.1.0\n"), None, "the key is case-sensitive, as the vendor's find");
        let dir = std::env::temp_dir().join(format!("regcheck-release-{}", std::process::id()));
        let file = dir.join(RUNTIME_VERSION_FILE);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, text).unwrap();
        let files = version_files(&[dir.join("missing"), dir.clone()]);
        assert_eq!(read_version_file(&files), Some(("9.1.0".to_string(), file)));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! What libregcheck.so shows a consumer: its SONAME, exactly the documented exports (the
//! vendor's names it interposes and regcheck's C API), the header's declarations against them,
//! and the docs' lists of exported calls against the build.

use super::*;

#[test]
fn shared_library_has_the_soname() {
    require("objdump");
    let lib = prefix().join(format!("lib/libregcheck.so.{VERSION}"));
    let out = run_ok(Command::new("objdump").arg("-p").arg(&lib));
    let soname = out.lines().find_map(|l| l.trim().strip_prefix("SONAME")).map(str::trim);
    assert_eq!(soname, Some(format!("libregcheck.so.{}", soversion()).as_str()), "objdump -p:\n{out}");
}

/// The defined dynamic symbols of `lib` (without version suffixes).
fn exports(lib: &Path) -> BTreeSet<String> {
    exports_of_kind(lib, |_| true)
}

/// The defined dynamic symbols of `lib` whose `nm` type letter passes `kind`.
fn exports_of_kind(lib: &Path, kind: impl Fn(&str) -> bool) -> BTreeSet<String> {
    require("nm");
    let out = run_ok(Command::new("nm").args(["-D", "--defined-only"]).arg(lib));
    out.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() >= 3 && kind(w[1])).then(|| w[2].split('@').next().unwrap().to_string())
        })
        .collect()
}

fn allowed(sym: &str) -> bool {
    sym.starts_with("regcheck_")
        || ACL_EXPORTS.contains(&sym)
        || sym.starts_with("_ZN4hixl4Hixl")
        || ADXL_EXPORTS.contains(&sym)
        || sym.starts_with("HixlCS")
        || DATADIST_EXPORTS.contains(&sym)
        || ["dlsym", "dlvsym", "dlopen"].contains(&sym)
}

/// The `llm_datadist::LlmDataDist` members libregcheck.so interposes
/// (`tests/datadist.rs::exported_names_match_a_build_of_the_vendors_header` holds them to a
/// build of the header), and HCCL's global-memory registration.
const DATADIST_EXPORTS: &[&str] = &[
    "_ZN12llm_datadist11LlmDataDistC1EmNS_7LlmRoleE",
    "_ZN12llm_datadist11LlmDataDistD1Ev",
    "_ZN12llm_datadist11LlmDataDist10InitializeERKSt3mapIN2ge12AscendStringES3_St4lessIS3_ESaISt4pairIKS3_S3_EEE",
    "_ZN12llm_datadist11LlmDataDist8FinalizeEv",
    "_ZN12llm_datadist11LlmDataDist15RegisterKvCacheERKNS_9CacheDescERKSt6vectorImSaImEERKNS_11RegisterCfgERl",
    "_ZN12llm_datadist11LlmDataDist17UnregisterKvCacheEl",
    "HcclRegisterGlobalMem",
    "HcclDeregisterGlobalMem",
];

/// The `adxl::AdxlEngine` members libregcheck.so interposes: every member Mooncake's Ascend
/// transport imports strongly, and the weak TransferAsync and GetTransferStatus.
const ADXL_EXPORTS: &[&str] = &[
    "_ZN4adxl10AdxlEngineC1Ev",
    "_ZN4adxl10AdxlEngineD1Ev",
    "_ZN4adxl10AdxlEngine10InitializeERKN2ge12AscendStringERKSt3mapIS2_S2_St4lessIS2_ESaISt4pairIS3_S2_EEE",
    "_ZN4adxl10AdxlEngine8FinalizeEv",
    "_ZN4adxl10AdxlEngine11RegisterMemERKNS_7MemDescENS_7MemTypeERPv",
    "_ZN4adxl10AdxlEngine13DeregisterMemEPv",
    "_ZN4adxl10AdxlEngine7ConnectERKN2ge12AscendStringEi",
    "_ZN4adxl10AdxlEngine10DisconnectERKN2ge12AscendStringEi",
    "_ZN4adxl10AdxlEngine12TransferSyncERKN2ge12AscendStringENS_10TransferOpERKSt6vectorINS_14TransferOpDescESaIS7_EEi",
    "_ZN4adxl10AdxlEngine13TransferAsyncERKN2ge12AscendStringENS_10TransferOpERKSt6vectorINS_14TransferOpDescESaIS7_EERKNS_12TransferArgsERPv",
    "_ZN4adxl10AdxlEngine17GetTransferStatusERKPvRNS_14TransferStatusE",
];

#[test]
fn exports_exactly_the_interposed_functions_and_the_c_api() {
    let syms = exports(&prefix().join(format!("lib/libregcheck.so.{VERSION}")));
    let extra: Vec<&String> = syms.iter().filter(|s| !allowed(s)).collect();
    assert!(extra.is_empty(), "libregcheck.so exports symbols outside its export list: {extra:?}");
    for name in ["rust_eh_personality", "__rust_alloc", "__rust_probestack", "rust_begin_unwind"] {
        assert!(!syms.contains(name), "{name} is exported");
    }
    for acl in ACL_EXPORTS {
        assert!(syms.contains(*acl), "{acl} is not exported");
    }
    assert!(syms.contains("regcheck_version"), "regcheck_version is not exported");
    assert!(
        syms.iter().any(|s| s.starts_with("_ZN4hixl4Hixl11RegisterMem")),
        "hixl::Hixl::RegisterMem is not exported"
    );
    assert!(syms.iter().any(|s| s.starts_with("HixlCS")), "no HixlCS* function is exported");
    for adxl in ADXL_EXPORTS.iter().chain(DATADIST_EXPORTS) {
        assert!(syms.contains(*adxl), "{adxl} is not exported");
    }
    // ADXL's static feature gates stay the vendor's: programs test whether they exist.
    for gate in ["GetCapability", "MallocMem", "FreeMem", "ExportToShareableHandle"] {
        let name = format!("_ZN4adxl10AdxlEngine{}{gate}", gate.len());
        assert!(!syms.iter().any(|s| s.starts_with(&name)), "{name}... is exported");
    }
}

/// The names of the functions declared in a C header: an identifier with the prefix, followed
/// by `(`.
fn declared_functions(header: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let bytes = header.as_bytes();
    let mut i = 0;
    while let Some(pos) = header[i..].find(prefix) {
        let start = i + pos;
        let before_ok = start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_');
        let mut end = start;
        while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
            end += 1;
        }
        let rest = header[end..].trim_start();
        if before_ok && rest.starts_with('(') {
            out.insert(header[start..end].to_string());
        }
        i = end.max(start + 1);
    }
    out
}

#[test]
fn every_exported_regcheck_function_is_declared_in_the_header_and_vice_versa() {
    let prefix = prefix();
    let header = fs::read_to_string(prefix.join("include/regcheck.h")).unwrap();
    // comments may mention calls; only declarations count
    let code: String = header
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !(t.starts_with("//") || t.starts_with("/*") || t.starts_with('*'))
        })
        .collect::<Vec<_>>()
        .join("\n");
    let declared = declared_functions(&code, "regcheck_");
    // Functions only: the data objects `regcheck_audit_flags` (written by the LD_AUDIT module,
    // src/platform/audit.rs) and `regcheck_dl_next`, and the `regcheck_dl_*_pre` functions (what
    // regcheck's own dlsym, dlvsym and dlopen stubs call, src/ffi/dl.rs), are not the C API.
    let lib = prefix.join(format!("lib/libregcheck.so.{VERSION}"));
    let data = exports_of_kind(&lib, |t| !matches!(t, "T" | "W" | "i"));
    assert_eq!(
        data.iter().filter(|s| s.starts_with("regcheck_")).collect::<Vec<_>>(),
        ["regcheck_audit_flags", "regcheck_dl_next"]
    );
    let exported: BTreeSet<String> = exports_of_kind(&lib, |t| matches!(t, "T" | "W" | "i"))
        .into_iter()
        .filter(|s| s.starts_with("regcheck_") && !s.starts_with("regcheck_dl_"))
        .collect();
    assert!(!declared.is_empty(), "no regcheck_ function found in include/regcheck.h");
    let undeclared: Vec<_> = exported.difference(&declared).collect();
    let unexported: Vec<_> = declared.difference(&exported).collect();
    assert!(undeclared.is_empty(), "exported but not declared in include/regcheck.h: {undeclared:?}");
    assert!(unexported.is_empty(), "declared in include/regcheck.h but not exported: {unexported:?}");

    for (macro_name, value) in [
        ("REGCHECK_VERSION_MAJOR", VERSION_MAJOR),
        ("REGCHECK_VERSION_MINOR", VERSION_MINOR),
        ("REGCHECK_VERSION_PATCH", VERSION_PATCH),
    ] {
        let line = format!("#define {macro_name} {value}");
        assert!(header.lines().any(|l| l.trim() == line), "the installed header lacks `{line}`");
    }
}

/// The section of the Markdown page `page` (under docs/) that starts at the heading `heading`.
fn doc_section(page: &str, heading: &str) -> String {
    let text = fs::read_to_string(testkit::workspace_root().join("docs").join(page)).unwrap();
    let start = text.find(heading).unwrap_or_else(|| panic!("docs/{page} has no `{heading}`"));
    let rest = &text[start + heading.len()..];
    rest[..rest.find("\n## ").unwrap_or(rest.len())].to_string()
}

/// The `` `word` `` spans of `text` that `keep` accepts.
fn code_words(text: &str, keep: impl Fn(&str) -> bool) -> BTreeSet<String> {
    text.split('`').skip(1).step_by(2).filter(|w| keep(w)).map(str::to_string).collect()
}

fn is_acl_function(w: &str) -> bool {
    w.starts_with("acl") && w.len() > 3 && w.chars().all(|c| c.is_ascii_alphanumeric())
}

/// What the docs list of the build is the build: the ACL functions libregcheck.so exports
/// (`nm -D`) are those packaging.md's exports section and usage.md's "What regcheck sees" name;
/// the simulator's libraries installed (the manifest) are those packaging.md's tree names; the
/// targets behind `regcheck::sim` (the installed CMake package) are those its table names; and
/// the guide is installed under share/doc/regcheck.
#[test]
fn the_lists_in_the_docs_are_the_build() {
    let prefix = prefix();
    let exported: BTreeSet<String> = exports(&prefix.join(format!("lib/libregcheck.so.{VERSION}")))
        .into_iter()
        .filter(|s| is_acl_function(s))
        .collect();
    assert!(exported.len() >= 18, "{exported:?}");
    for (page, heading) in [
        ("packaging.md", "## The shared library's SONAME and exports"),
        ("usage.md", "## What regcheck sees and detects"),
    ] {
        let section = doc_section(page, heading);
        // the first paragraph
        let section = section.trim_start();
        let named = code_words(&section[..section.find("\n\n").unwrap_or(section.len())], is_acl_function);
        assert_eq!(named, exported, "docs/{page} `{heading}`: the ACL functions named vs exported");
    }
    assert!(doc_section("packaging.md", "## The shared library's SONAME and exports").contains("`adxl::AdxlEngine`"));

    let manifest = fs::read_to_string(prefix.join("share/regcheck/install_manifest.txt")).unwrap();
    let sim_libs: BTreeSet<String> = manifest
        .lines()
        .filter_map(|l| l.strip_prefix("lib/regcheck/sim/"))
        .filter(|l| !l.is_empty() && !l.contains('/'))
        .map(str::to_string)
        .collect();
    // each other release's root (lib/regcheck/sim/<release>/) holds the same libraries
    for release in &testkit::SIM_RELEASES[1..] {
        let root: BTreeSet<String> = manifest
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("lib/regcheck/sim/{release}/")))
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        assert_eq!(root, sim_libs, "lib/regcheck/sim/{release}/ vs lib/regcheck/sim/");
    }
    let packaging = fs::read_to_string(testkit::workspace_root().join("docs/packaging.md")).unwrap();
    let row = packaging.lines().find(|l| l.starts_with("| `lib/regcheck/sim/` |")).expect("the simulator's row");
    assert_eq!(code_words(row, |w| w.ends_with(".so")), sim_libs, "docs/packaging.md's simulator row vs the manifest");

    let config = fs::read_to_string(prefix.join("lib/cmake/regcheck/regcheckConfig.cmake")).unwrap();
    let at = config.find("add_library(regcheck::sim INTERFACE").expect("regcheck::sim");
    let deps = &config[at..];
    let deps = deps[deps.find("INTERFACE_LINK_LIBRARIES \"").unwrap() + 26..].split('"').next().unwrap();
    let behind: BTreeSet<String> = deps.split(';').map(|t| t.trim_start_matches("regcheck::").to_string()).collect();
    let row = packaging.lines().find(|l| l.starts_with("| `regcheck::sim` |")).expect("regcheck::sim's row");
    assert_eq!(code_words(row, |w| w.starts_with("sim_")), behind, "docs/packaging.md's regcheck::sim row");

    let docs = tree(&testkit::workspace_root().join("docs"));
    for doc in docs.iter().filter(|d| d.ends_with(".md")).map(|d| format!("docs/{d}")).chain(["README.md".into()]) {
        assert!(prefix.join("share/doc/regcheck").join(&doc).is_file(), "{doc} is not installed");
    }
}

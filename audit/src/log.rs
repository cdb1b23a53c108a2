//! The module's log lines, built on the stack (no allocation, no locks) and written where the
//! library writes its log, in its format: appended to `REGCHECK_LOG_FILE`, else on standard
//! error; `regcheck-audit: <text>`, or with `REGCHECK_LOG_FORMAT=json` one JSON `message`
//! object per line with the library's fields (docs/json.md), `component` `regcheck-audit`.
//!
//! The variables are read once, by [`init`] from `la_version`, with `secure_getenv`: in a
//! secure-execution process none is honoured, as the library honours neither the log file
//! nor the format there. `REGCHECK_LOG`, which the library honours everywhere, filters the
//! module's lines as it filters the library's (target `regcheck`), read with [`verbosity`].

use crate::json;
use crate::sys;
use core::ffi::{c_char, c_int, CStr};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::OnceLock;

/// Longest line written (a longer message is cut and marked with `...`).
const CAP: usize = 1024;
/// Kept free for the end of a line: `...` (a cut), `"}` (JSON) and the newline.
const RESERVE: usize = 6;
/// Room for the log file's path and its NUL (`PATH_MAX`).
const PATH_MAX: usize = 4096;

/// The severity of a line (`level` in JSON; the text format does not show it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Warning,
    Info,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Warning => "warning",
            Level::Info => "info",
        }
    }
}

/// How much of regcheck's log `REGCHECK_LOG` lets through, from `off` to `trace`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    Off,
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl Verbosity {
    fn parse(s: &str) -> Option<Verbosity> {
        const NAMES: [(&str, Verbosity); 6] = [
            ("off", Verbosity::Off),
            ("error", Verbosity::Error),
            ("warn", Verbosity::Warn),
            ("info", Verbosity::Info),
            ("debug", Verbosity::Debug),
            ("trace", Verbosity::Trace),
        ];
        NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(s)).map(|(_, v)| *v)
    }

    fn from_u8(v: u8) -> Verbosity {
        [Verbosity::Off, Verbosity::Error, Verbosity::Warn, Verbosity::Info, Verbosity::Debug, Verbosity::Trace]
            [usize::from(v.min(5))]
    }
}

/// The library's default filter (`warn`), used when `REGCHECK_LOG` is unset, empty or not a
/// filter, as the library does.
pub const DEFAULT_VERBOSITY: Verbosity = Verbosity::Warn;

/// What the `env_logger` filter `spec` (the syntax of `REGCHECK_LOG`) lets through for the
/// target `regcheck`, the library's own and the one the module's lines count as: the directive
/// of the longest name that starts `regcheck`, else the bare level, else nothing (a filter that
/// names only other targets silences regcheck). A directive without `=` that is not a level
/// names a target with every level; a `/regex` part is ignored (the module's lines are few).
pub fn verbosity(spec: &[u8]) -> Verbosity {
    let Ok(spec) = core::str::from_utf8(spec) else { return DEFAULT_VERBOSITY };
    let spec = spec.split('/').next().unwrap_or("").trim();
    if spec.is_empty() {
        return DEFAULT_VERBOSITY;
    }
    let (mut global, mut named): (Option<Verbosity>, Option<(usize, Verbosity)>) = (None, None);
    for d in spec.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let (name, level) = match d.split_once('=') {
            Some((name, level)) => match Verbosity::parse(level.trim()) {
                Some(v) => (name.trim(), v),
                // Not a filter: the library falls back to its default, so does the module.
                None => return DEFAULT_VERBOSITY,
            },
            None => match Verbosity::parse(d) {
                Some(v) => ("", v),
                None => (d, Verbosity::Trace),
            },
        };
        if name.is_empty() {
            global = Some(level);
        } else if "regcheck".starts_with(name) && named.is_none_or(|(len, _)| name.len() >= len) {
            named = Some((name.len(), level));
        }
    }
    named.map(|(_, v)| v).or(global).unwrap_or(Verbosity::Off)
}

/// The variables the module reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings<'a> {
    /// `REGCHECK_AUDIT_LOG` set and not `0`: log the target and each redirection.
    pub redirections: bool,
    /// `REGCHECK_LOG_FORMAT` is `json` (or `jsonl`), in any case.
    pub json: bool,
    /// `REGCHECK_LOG_FILE`, when set.
    pub file: Option<&'a [u8]>,
    /// `REGCHECK_LOG`, read apart (see [`verbosity`]): [`DEFAULT_VERBOSITY`] until set.
    pub verbosity: Verbosity,
}

impl<'a> Settings<'a> {
    /// The settings from the variables as `get` reads them (empty when unset). The library's
    /// configuration reads them the same way: a value that is not UTF-8 counts as unset, white
    /// space around a value is dropped, and an empty or unknown format means text.
    pub fn read(get: impl Fn(&CStr) -> &'a [u8]) -> Settings<'a> {
        let text = |name: &CStr| core::str::from_utf8(get(name)).map(str::trim).unwrap_or("");
        let audit_log = get(c"REGCHECK_AUDIT_LOG");
        let format = text(c"REGCHECK_LOG_FORMAT");
        let file = text(c"REGCHECK_LOG_FILE");
        Settings {
            redirections: !audit_log.is_empty() && audit_log != b"0",
            json: format.eq_ignore_ascii_case("json") || format.eq_ignore_ascii_case("jsonl"),
            file: (!file.is_empty()).then_some(file.as_bytes()),
            verbosity: DEFAULT_VERBOSITY,
        }
    }

    /// With `REGCHECK_LOG`'s value (empty when unset).
    pub fn with_filter(self, spec: &[u8]) -> Settings<'a> {
        Settings { verbosity: verbosity(spec), ..self }
    }
}

/// A NUL-terminated copy of the log file's path, taken at start-up: the environment's own
/// strings may be overwritten later (programs that rewrite their title reuse that memory).
struct LogPath {
    buf: [u8; PATH_MAX],
}

impl LogPath {
    fn new(path: &[u8]) -> Option<LogPath> {
        if path.len() >= PATH_MAX || path.contains(&0) {
            return None;
        }
        let mut p = LogPath { buf: [0; PATH_MAX] };
        p.buf[..path.len()].copy_from_slice(path);
        Some(p)
    }
}

static REDIRECTIONS: AtomicBool = AtomicBool::new(false);
static JSON: AtomicBool = AtomicBool::new(false);
static VERBOSITY: AtomicU8 = AtomicU8::new(DEFAULT_VERBOSITY as u8);
static FILE: OnceLock<LogPath> = OnceLock::new();

/// Applies the settings (once, from `la_version`). A path too long to open leaves the lines
/// on standard error, where the library also falls back when it cannot open the file.
pub fn init(s: &Settings<'_>) {
    REDIRECTIONS.store(s.redirections, Ordering::Relaxed);
    JSON.store(s.json, Ordering::Relaxed);
    VERBOSITY.store(s.verbosity as u8, Ordering::Relaxed);
    if let Some(p) = s.file.and_then(LogPath::new) {
        let _ = FILE.set(p);
    }
}

/// `REGCHECK_AUDIT_LOG=1`: the target and each redirection are logged.
pub fn redirections() -> bool {
    REDIRECTIONS.load(Ordering::Relaxed)
}

/// When and by whom a line is written.
struct Stamp {
    unix_ms: u64,
    pid: u64,
    tid: u64,
}

impl Stamp {
    fn now() -> Stamp {
        let unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        // SAFETY: gettid has no arguments and cannot fail.
        let tid = unsafe { sys::syscall(sys::SYS_GETTID) };
        Stamp { unix_ms, pid: u64::from(std::process::id()), tid: tid as u64 }
    }
}

/// A log line; text beyond its capacity is cut and marked with `...`.
pub struct Line {
    buf: [u8; CAP],
    len: usize,
    cut: bool,
    json: bool,
}

impl Line {
    /// A line in the format the user asked for, stamped now.
    pub fn new(level: Level) -> Line {
        Line::start(level, JSON.load(Ordering::Relaxed), &Stamp::now())
    }

    /// The line's head: `regcheck-audit: `, or the JSON object up to the message's opening
    /// quote (key order is not significant; `message` comes last so that a cut stays inside it).
    fn start(level: Level, json: bool, stamp: &Stamp) -> Line {
        let mut l = Line { buf: [0; CAP], len: 0, cut: false, json };
        if !json {
            l.put(b"regcheck-audit: ");
            return l;
        }
        let mut digits = [0; 20];
        l.put(b"{\"schema\":1,\"type\":\"message\",\"component\":\"regcheck-audit\",\"time\":\"");
        l.put(&json::rfc3339_millis(stamp.unix_ms));
        l.put(b"\",\"pid\":");
        l.put(json::decimal(stamp.pid, &mut digits));
        l.put(b",\"tid\":");
        l.put(json::decimal(stamp.tid, &mut digits));
        l.put(b",\"level\":\"");
        l.put(level.as_str().as_bytes());
        l.put(b"\",\"message\":\"");
        l
    }

    /// Appends `b` whole when it fits in front of the reserve.
    fn put(&mut self, b: &[u8]) -> bool {
        if self.len + b.len() > CAP - RESERVE {
            return false;
        }
        self.buf[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
        true
    }

    /// Appends message text: as is in the text format, escaped in JSON (see
    /// [`json::escape`]). What does not fit is dropped, and the line marked as cut.
    pub fn push(&mut self, s: &[u8]) -> &mut Line {
        if self.cut {
            return self;
        }
        let whole = if self.json {
            json::escape(s, |piece| self.put(piece))
        } else {
            let n = s.len().min(CAP - RESERVE - self.len);
            self.put(&s[..n]) && n == s.len()
        };
        self.cut = !whole;
        self
    }

    /// The whole line with its end: `...` when cut, the JSON object closed, the newline.
    pub fn finish(&mut self) -> &[u8] {
        let mut end = self.len;
        let mut add = |b: &[u8]| {
            self.buf[end..end + b.len()].copy_from_slice(b);
            end += b.len();
        };
        if self.cut {
            add(b"...");
        }
        if self.json {
            add(b"\"}");
        }
        add(b"\n");
        &self.buf[..end]
    }

    /// Writes the line, with one `write` when the system allows, to the log file (opened to
    /// append, and closed, each time: lines are rare) or, without one or when it cannot be
    /// opened, to standard error.
    pub fn emit(&mut self) {
        // The warnings are warn-level lines of regcheck's; the info lines were asked for by
        // REGCHECK_AUDIT_LOG, so only a filter that silences regcheck's warnings drops them.
        if Verbosity::from_u8(VERBOSITY.load(Ordering::Relaxed)) < Verbosity::Warn {
            return;
        }
        let file = FILE.get();
        let line = self.finish();
        let fd = match file {
            // SAFETY: the path is NUL-terminated; open has no other precondition.
            Some(p) => unsafe {
                sys::open(
                    p.buf.as_ptr().cast::<c_char>(),
                    sys::O_WRONLY | sys::O_CREAT | sys::O_APPEND | sys::O_CLOEXEC,
                    sys::LOG_FILE_MODE,
                )
            },
            None => -1,
        };
        if fd >= 0 {
            write_all(fd, line);
            // SAFETY: `fd` was opened above and is not used after this.
            unsafe { sys::close(fd) };
        } else {
            write_all(2, line);
        }
    }
}

fn write_all(fd: c_int, bytes: &[u8]) {
    let mut off = 0;
    while off < bytes.len() {
        // SAFETY: the range lies inside `bytes`.
        let n = unsafe { sys::write(fd, bytes[off..].as_ptr().cast(), bytes.len() - off) };
        if n <= 0 {
            break;
        }
        off += n as usize;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    const STAMP: Stamp = Stamp { unix_ms: 1_796_075_310_875, pid: 20110, tid: 20112 };

    fn parse(line: &[u8]) -> Value {
        assert_eq!(line.last(), Some(&b'\n'));
        assert_eq!(line.iter().filter(|&&c| c == b'\n').count(), 1, "one line");
        serde_json::from_slice(line).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(line)))
    }

    #[test]
    fn text_lines() {
        let mut l = Line::start(Level::Info, false, &STAMP);
        l.push(b"x=").push(b"1");
        assert_eq!(l.finish(), b"regcheck-audit: x=1\n");
    }

    #[test]
    fn long_text_lines_are_cut_and_marked() {
        let mut l = Line::start(Level::Warning, false, &STAMP);
        l.push(&[b'a'; 2000]).push(b"tail");
        let b = l.finish();
        assert!(b.len() <= CAP);
        assert!(b.ends_with(b"aaa...\n"));
    }

    #[test]
    fn json_lines_have_the_documented_fields() {
        let mut l = Line::start(Level::Warning, true, &STAMP);
        l.push(b"ignoring ").push(b"/tmp/a \"b\"\\c\td\n\x01\xff/libx.so").push(b": no dynamic symbol table");
        let v = parse(l.finish());
        let want = serde_json::json!({
            "schema": 1,
            "type": "message",
            "component": "regcheck-audit",
            "time": "2026-11-30T21:48:30.875Z",
            "pid": 20110,
            "tid": 20112,
            "level": "warning",
            "message": "ignoring /tmp/a \"b\"\\c\td\n\u{1}\u{fffd}/libx.so: no dynamic symbol table",
        });
        assert_eq!(v, want);
        let v = parse(Line::start(Level::Info, true, &STAMP).finish());
        assert_eq!(v["level"], "info");
        assert_eq!(v["message"], "");
    }

    #[test]
    fn long_json_lines_are_cut_inside_the_message_and_stay_json() {
        // Escapes of every length, so that the cut falls at each position in some run.
        for unit in [&b"a"[..], b"\"", b"\x01", b"\xe2\x82\xac", b"\xff"] {
            for lead in 0..8 {
                let mut l = Line::start(Level::Info, true, &STAMP);
                l.push(&[b'x'; 8][..lead]);
                for _ in 0..CAP {
                    l.push(unit);
                }
                let line = l.finish();
                assert!(line.len() <= CAP, "{}", line.len());
                let v = parse(line);
                assert!(v["message"].as_str().unwrap().ends_with("..."), "{v}");
                assert_eq!(v["level"], "info");
            }
        }
    }

    #[test]
    fn settings_are_read_as_the_library_reads_them() {
        let env = |pairs: &'static [(&'static str, &'static [u8])]| {
            move |name: &CStr| -> &'static [u8] {
                pairs.iter().find(|(k, _)| k.as_bytes() == name.to_bytes()).map_or(&b""[..], |(_, v)| *v)
            }
        };
        let s = Settings::read(env(&[]));
        assert_eq!(s, Settings { redirections: false, json: false, file: None, verbosity: Verbosity::Warn });
        for (format, json) in [
            (&b"json"[..], true),
            (b" JSON\n", true),
            (b"jsonl", true),
            (b"text", false),
            (b"yaml", false),
            (b"js\xffon", false),
        ] {
            let s = Settings::read(move |n: &CStr| if n == c"REGCHECK_LOG_FORMAT" { format } else { b"" });
            assert_eq!(s.json, json, "{format:?}");
        }
        let s = Settings::read(env(&[("REGCHECK_LOG_FILE", b" /tmp/log.jsonl "), ("REGCHECK_AUDIT_LOG", b"1")]));
        assert_eq!(s.file, Some(&b"/tmp/log.jsonl"[..]));
        assert!(s.redirections);
        assert_eq!(Settings::read(env(&[("REGCHECK_LOG_FILE", b"  ")])).file, None);
        assert_eq!(Settings::read(env(&[("REGCHECK_LOG_FILE", b"/tmp/\xff")])).file, None, "not UTF-8: unset");
        assert!(!Settings::read(env(&[("REGCHECK_AUDIT_LOG", b"0")])).redirections);
    }

    /// As the library's `env_filter` reads `REGCHECK_LOG` for the target `regcheck`.
    #[test]
    fn the_log_filter_is_read_as_the_library_reads_it() {
        use Verbosity::*;
        for (spec, want) in [
            (&b""[..], Warn),
            (b"  ", Warn),
            (b"off", Off),
            (b"OFF", Off),
            (b"error", Error),
            (b"info", Info),
            (b"trace", Trace),
            (b"regcheck=off", Off),
            (b"info,regcheck=error", Error),
            (b"regcheck=error,info", Error),
            (b"regcheck=debug,regcheck::frontend=off", Debug),
            (b"reg=info,regcheck=off", Off),
            (b"reg=info", Info),
            (b"regcheck", Trace),
            (b"other=debug", Off),
            (b"other=debug,warn", Warn),
            (b"warn,regcheck=loud", Warn),
            (b"error/some regex", Error),
            (b"\xff", Warn),
        ] {
            assert_eq!(verbosity(spec), want, "{:?}", String::from_utf8_lossy(spec));
        }
        assert_eq!(verbosity(b"in\xfffo"), Warn, "not UTF-8: the default");
    }

    #[test]
    fn log_paths_are_copied_with_their_nul() {
        let p = LogPath::new(b"/tmp/x.log").unwrap();
        assert_eq!(&p.buf[..11], b"/tmp/x.log\0");
        assert!(LogPath::new(&[b'a'; PATH_MAX]).is_none());
        assert!(LogPath::new(b"a\0b").is_none());
    }
}

//! What a failure message shows of a program's output: the end of it, bounded, with the whole
//! of it kept in a file under `<target>/testkit/output/` that the message names. A program
//! that writes millions of lines (a thread logging in a loop) must not turn a failure into
//! hundreds of megabytes of test log.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::paths::target_dir;

/// How many lines of each stream a failure message shows at most: the last ones.
pub const SHOWN_LINES: usize = 200;

/// How many bytes of each stream a failure message shows at most (the last lines may be long).
pub const SHOWN_BYTES: usize = 64 * 1024;

/// The end of `text` a message shows: its last [`SHOWN_LINES`] lines, cut further to the last
/// [`SHOWN_BYTES`] bytes (from a character boundary) when they are longer.
pub(crate) fn tail(text: &str) -> &str {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let start = body.rmatch_indices('\n').nth(SHOWN_LINES - 1).map_or(0, |(i, _)| i + 1);
    if text.len() - start <= SHOWN_BYTES {
        return &text[start..];
    }
    let mut cut = text.len() - SHOWN_BYTES;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    &text[cut..]
}

/// Where the whole output of a run of `program` is kept: a new file under
/// `<target>/testkit/output/`, named after the program, this process and a sequence number.
fn output_file(program: &Path) -> PathBuf {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let name = program.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "program".into());
    target_dir().join("testkit").join("output").join(format!(
        "{name}-{}-{}.txt",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ))
}

/// stdout and stderr, labelled, for a failure message: each bounded by [`tail`]. When either is
/// cut, both are written whole to a file (once: `saved` remembers what the message says of it)
/// that the message names.
pub(crate) fn streams(program: &Path, stdout: &str, stderr: &str, saved: &OnceLock<String>) -> String {
    let (out, err) = (tail(stdout), tail(stderr));
    if out.len() == stdout.len() && err.len() == stderr.len() {
        return format!("--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}");
    }
    let whole = saved.get_or_init(|| {
        let file = output_file(program);
        let written = file
            .parent()
            .map_or(Ok(()), fs::create_dir_all)
            .and_then(|()| fs::write(&file, format!("--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}")));
        match written {
            Ok(()) => format!("the whole output is in {}", file.display()),
            Err(e) => format!("the whole output could not be kept in {}: {e}", file.display()),
        }
    });
    let label = |name: &str, text: &str, shown: &str| {
        if shown.len() == text.len() {
            format!("--- {name} ---")
        } else {
            let (n, total) = (shown.lines().count(), text.lines().count());
            format!("--- {name}: the last {n} of {total} lines ({} bytes); {whole} ---", text.len())
        }
    };
    format!("{}\n{out}\n{}\n{err}", label("stdout", stdout, out), label("stderr", stderr, err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_shown_whole_and_long_output_by_its_end() {
        assert_eq!(tail("a\nb\n"), "a\nb\n");
        assert_eq!(tail(""), "");
        let many: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let t = tail(&many);
        assert_eq!(t.lines().count(), SHOWN_LINES);
        assert!(t.starts_with("line 800\n") && t.ends_with("line 999\n"), "{t}");
        let long = format!("first\n{}\nlast", "x".repeat(3 * SHOWN_BYTES));
        let t = tail(&long);
        assert!(t.len() <= SHOWN_BYTES && t.ends_with("x\nlast"), "{}", t.len());
        let wide = "\u{e9}".repeat(SHOWN_BYTES);
        assert!(tail(&wide).len() <= SHOWN_BYTES);
    }

    #[test]
    fn a_cut_message_names_the_file_with_all_of_it() {
        let saved = OnceLock::new();
        let noise: String = (0..100_000).map(|i| format!("noise {i}\n")).collect();
        let msg = streams(Path::new("/x/noisy"), "rc 0\n", &noise, &saved);
        assert!(msg.len() < 2 * SHOWN_BYTES, "{}", msg.len());
        assert!(msg.contains("--- stdout ---\nrc 0\n"), "{msg}");
        assert!(msg.contains("noise 99999"), "the end is shown");
        let path = msg.split("the whole output is in ").nth(1).and_then(|r| r.split(" ---").next()).expect(&msg[..300]);
        assert!(path.contains("/testkit/output/noisy-"), "{path}");
        let kept = fs::read_to_string(path).unwrap();
        assert!(kept.contains("noise 0\n") && kept.contains("noise 99999\n") && kept.contains("rc 0\n"));
        assert_eq!(streams(Path::new("/x/noisy"), "rc 0\n", &noise, &saved), msg, "written once");
        fs::remove_file(path).unwrap();
    }
}

//! The README works literally: every shell and CMake snippet of README.md runs as written, in
//! order, on this machine (no CANN), with `HOME` a scratch directory: the install, the CMake
//! and pkg-config builds (the CANN variants with the simulator standing in for CANN's
//! environment, as its `set_env.sh` would set it up; the simulator variants with nothing), the
//! programs they build, `LD_PRELOAD`, `regcheck run`, then the uninstall. A snippet another
//! test runs (the demo, the wheel, pytest) names that test in [`ELSEWHERE`]; a snippet that
//! is neither run here nor named there fails this test. The output sample at the top of the
//! README is compared with the demo's output by `tests/doc_samples.rs`.
//!
//! Needs cmake, pkg-config, make and a C/C++ compiler (`cargo xtask test` installs them).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// The README's commands that other tests run: (how the line starts, the test that runs it).
const ELSEWHERE: &[(&str, &str)] = &[
    ("cargo xtask demo", "tests/demo.rs::the_demo_shows_the_contrast_per_step"),
    ("cargo xtask test", "the whole suite: it is the test command"),
    ("cargo xtask wheel", "tests/wheel.rs::the_wheel_is_packed_on_a_machine_without_cmake_or_make"),
    ("python3 -m pip install target/wheels/", "tests/wheel.rs::the_command_on_path_is_the_installed_command"),
    ("regcheck run pytest", "tests/wheel.rs::the_pytest_plugin_fails_the_mistake_without_audit_too"),
];

const TIMEOUT: Duration = Duration::from_secs(20 * 60);

struct Block {
    info: String,
    text: String,
    line: usize,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut cur: Option<Block> = None;
    for (event, range) in Parser::new_ext(text, Options::empty()).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let info = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                let line = text[..range.start].lines().count() + 1;
                cur = Some(Block { info, text: String::new(), line });
            }
            Event::Text(t) => {
                if let Some(b) = cur.as_mut() {
                    b.text.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => out.extend(cur.take()),
            _ => {}
        }
    }
    out
}

/// The command lines of a block (comments and blank lines dropped).
fn lines(text: &str) -> Vec<&str> {
    text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect()
}

fn elsewhere(line: &str) -> Option<&'static str> {
    ELSEWHERE.iter().find(|(start, _)| line.starts_with(start)).map(|(_, test)| *test)
}

/// True when `source` defines `#[test] fn name(`.
fn has_test(source: &str, name: &str) -> bool {
    let lines: Vec<&str> = source.lines().map(str::trim).collect();
    lines
        .iter()
        .enumerate()
        .any(|(i, l)| l.starts_with(&format!("fn {name}(")) && lines[..i].iter().rev().take(4).any(|a| *a == "#[test]"))
}

fn run(cmd: &mut Command, what: &str) -> String {
    let shown = format!("{cmd:?}");
    let out = testkit::output_within(cmd, TIMEOUT).unwrap_or_else(|e| panic!("{shown}: {e}"));
    let text = format!(
        "--- stdout ---\n{}--- stderr ---\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what} failed ({}):\n{text}", out.status);
    text
}

/// The environment of every snippet: a scratch HOME (rustup and cargo still found), nothing of
/// regcheck's or the simulator's.
fn base<'a>(cmd: &'a mut Command, home: &Path) -> &'a mut Command {
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        if k == "LD_PRELOAD"
            || k == "LD_LIBRARY_PATH"
            || k == "CPATH"
            || k == "LIBRARY_PATH"
            || k.starts_with("REGCHECK_")
            || k.starts_with("ACLSIM_")
            || k.starts_with("PKG_CONFIG")
        {
            cmd.env_remove(&key);
        }
    }
    let real_home = PathBuf::from(std::env::var_os("HOME").unwrap_or_default());
    let keep = |var: &str, default: PathBuf| std::env::var_os(var).map(PathBuf::from).unwrap_or(default);
    cmd.env("RUSTUP_HOME", keep("RUSTUP_HOME", real_home.join(".rustup")))
        .env("CARGO_HOME", keep("CARGO_HOME", real_home.join(".cargo")))
        .env("HOME", home)
}

/// What CANN's set_env.sh gives a shell, with the installed simulator standing in for CANN.
fn cann<'a>(cmd: &'a mut Command, prefix: &Path) -> &'a mut Command {
    let inc = prefix.join("include/regcheck/sim");
    let lib = prefix.join("lib/regcheck/sim");
    cmd.env("CPATH", format!("{}:{}", inc.display(), inc.join("acl").display()))
        .env("LIBRARY_PATH", &lib)
        .env("LD_LIBRARY_PATH", &lib)
}

#[test]
fn every_readme_snippet_runs_as_written() {
    let root = testkit::workspace_root();
    let readme = fs::read_to_string(root.join("README.md")).unwrap();
    let mut here = Vec::new();
    let mut missing = Vec::new();
    for b in blocks(&readme) {
        if b.info.is_empty() {
            continue; // the output sample: tests/doc_samples.rs
        }
        let ls = lines(&b.text);
        let away: Vec<&str> = ls.iter().filter_map(|l| elsewhere(l)).collect();
        if away.is_empty() {
            here.push(b);
            continue;
        }
        assert_eq!(away.len(), ls.len(), "README.md:{}: a block mixes commands run here and elsewhere", b.line);
        for test in away {
            if let Some((file, name)) = test.split_once("::") {
                let source = fs::read_to_string(root.join(file)).unwrap_or_default();
                if !has_test(&source, name) {
                    missing.push(format!("README.md:{}: {test} does not exist", b.line));
                }
            }
        }
    }
    assert!(here.len() >= 8, "only {} README blocks to run", here.len());
    // the uninstall last
    here.sort_by_key(|b| b.text.contains("uninstall"));

    let home = testkit::target_dir().join("readme-snippets");
    let _ = fs::remove_dir_all(&home);
    let work = home.join("work");
    fs::create_dir_all(&work).unwrap();
    let prefix = home.join(".local/regcheck");
    fs::copy(root.join("examples-c/acl_demo.c"), work.join("app.c")).unwrap();
    fs::copy(root.join("examples-c/hixl_demo.cpp"), work.join("app.cpp")).unwrap();
    fs::write(work.join("server.py"), "print('server.py ran')\n").unwrap();
    fs::write(work.join("ci_job"), "#!/bin/sh\necho ci_job ran\n").unwrap();
    run(Command::new("chmod").arg("+x").arg(work.join("ci_job")), "chmod");
    let state = home.join("exports.sh");
    fs::write(&state, "").unwrap();

    for (i, b) in here.iter().enumerate() {
        let with_cann = !b.text.contains("regcheck::sim") && !b.text.contains("regcheck-sim");
        let what = format!("README.md:{} ({} block, {})", b.line, b.info, if with_cann { "CANN" } else { "no CANN" });
        eprintln!("running {what}");
        match b.info.as_str() {
            "sh" => {
                // one shell per block; what a block exports carries to the next ones
                let script = format!(
                    "set -e\n. '{}'\n{}\nunset CPATH LIBRARY_PATH LD_LIBRARY_PATH\nexport -p > '{}'\n",
                    state.display(),
                    b.text,
                    state.display()
                );
                let mut cmd = Command::new("bash");
                cmd.arg("-c").arg(script);
                cmd.current_dir(if b.text.contains("cargo xtask") { root.as_path() } else { work.as_path() });
                base(&mut cmd, &home);
                if with_cann && prefix.is_dir() {
                    cann(&mut cmd, &prefix);
                }
                let out = run(&mut cmd, &what);
                if b.text.contains("cc app.c") {
                    // the program started, with regcheck interposed (it names the demo's mistakes)
                    assert!(out.contains("[ACL-HOSTREG-"), "{what}: ran unchecked:\n{out}");
                }
            }
            "cmake" => {
                let dir = work.join(format!("cmake-{i}"));
                fs::create_dir_all(&dir).unwrap();
                fs::copy(work.join("app.c"), dir.join("app.c")).unwrap();
                fs::write(
                    dir.join("CMakeLists.txt"),
                    format!(
                        "cmake_minimum_required(VERSION 3.16)\nproject(my_app C)\nadd_executable(my_app app.c)\n{}",
                        b.text
                    ),
                )
                .unwrap();
                // as the block's comment says
                assert!(b.text.contains("-DCMAKE_PREFIX_PATH=$HOME/.local/regcheck"), "{what}");
                let build = dir.join("build");
                let cmake = |args: &[&std::ffi::OsStr]| {
                    let mut c = Command::new("cmake");
                    c.args(args);
                    base(&mut c, &home);
                    if with_cann {
                        cann(&mut c, &prefix);
                    }
                    c
                };
                let p = format!("-DCMAKE_PREFIX_PATH={}", prefix.display());
                run(&mut cmake(&["-S".as_ref(), dir.as_os_str(), "-B".as_ref(), build.as_os_str(), p.as_ref()]), &what);
                run(&mut cmake(&["--build".as_ref(), build.as_os_str()]), &what);
                let mut exe = Command::new(build.join("my_app"));
                base(&mut exe, &home).current_dir(&dir);
                if with_cann {
                    cann(&mut exe, &prefix);
                }
                let out = run(&mut exe, &what);
                assert!(out.contains("[ACL-HOSTREG-"), "{what}: ran unchecked:\n{out}");
            }
            other => panic!("README.md:{}: a `{other}` block this test cannot run", b.line),
        }
    }
    assert!(!prefix.exists(), "the README's uninstall left {}", prefix.display());
    assert!(missing.is_empty(), "{missing:#?}");
}

#[test]
fn the_block_reader_finds_fenced_blocks() {
    let b = blocks("text\n\n```sh\necho a\n# note\n\necho b\n```\n\n```\nsample\n```\n");
    assert_eq!(b.len(), 2);
    assert_eq!((b[0].info.as_str(), b[0].line), ("sh", 3));
    assert_eq!(lines(&b[0].text), ["echo a", "echo b"]);
    assert_eq!(b[1].info, "");
    assert_eq!(elsewhere("cargo xtask demo"), Some("tests/demo.rs::the_demo_shows_the_contrast_per_step"));
    assert_eq!(elsewhere("cargo xtask install"), None);
}

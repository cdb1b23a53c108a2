//! The documentation keeps its word: in README.md and docs/*.md, every relative link names a
//! file that exists and every `#anchor` a heading of its page (as GitHub makes anchors); every
//! `cargo xtask <task>` and `regcheck <subcommand>` a code block tells the user to run exists
//! (xtask's usage text; the `regcheck` command's subcommands); and every page of the guide
//! starts by saying who it is for. The promise-to-test table is checked by `tests/readme.rs`.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// What a Markdown page holds that other pages rely on.
#[derive(Debug, Default)]
struct Page {
    /// Link destinations, with the line they are on.
    links: Vec<(String, usize)>,
    /// The anchors of its headings.
    anchors: BTreeSet<String>,
    /// Code blocks: (info string, text, line of the opening fence).
    code: Vec<(String, String, usize)>,
    /// The text of the first paragraph after the title.
    first_paragraph: String,
}

/// GitHub's anchor of a heading: lower case, every character but letters, digits, `-`, `_` and
/// spaces removed, spaces made `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

fn parse(text: &str) -> Page {
    let mut page = Page::default();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut heading: Option<String> = None;
    let mut block: Option<(String, String, usize)> = None;
    let mut paragraphs = 0;
    let mut paragraph: Option<String> = None;
    for (event, range) in Parser::new_ext(text, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => {
                let base = anchor(&heading.take().unwrap_or_default());
                // GitHub numbers repeated headings: `x`, `x-1`, `x-2`...
                let n = seen.entry(base.clone()).or_insert(0);
                page.anchors.insert(if *n == 0 { base.clone() } else { format!("{base}-{n}") });
                *n += 1;
            }
            Event::Start(Tag::Paragraph) => {
                paragraphs += 1;
                if paragraphs == 1 {
                    paragraph = Some(String::new());
                }
            }
            Event::End(TagEnd::Paragraph) => {
                if let Some(p) = paragraph.take() {
                    page.first_paragraph = p;
                }
            }
            Event::Start(Tag::Link { dest_url, .. }) => {
                page.links.push((dest_url.to_string(), line_of(text, range.start)))
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                let info = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                block = Some((info, String::new(), line_of(text, range.start)));
            }
            Event::End(TagEnd::CodeBlock) => page.code.extend(block.take()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                } else if let Some((_, b, _)) = block.as_mut() {
                    b.push_str(&t);
                } else if let Some(p) = paragraph.as_mut() {
                    p.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(p) = paragraph.as_mut() {
                    p.push(' ');
                }
            }
            _ => {}
        }
    }
    page
}

/// The links of `page` (a file at `path`) that do not resolve, as `file:line: link (why)`.
/// `read` gives the text of another page.
fn broken_links(path: &Path, page: &Page, read: &dyn Fn(&Path) -> Option<String>) -> Vec<String> {
    let mut broken = Vec::new();
    for (link, line) in &page.links {
        if link.contains("://") || link.starts_with("mailto:") {
            continue;
        }
        let (file, fragment) = link.split_once('#').unwrap_or((link, ""));
        let target = if file.is_empty() { path.to_path_buf() } else { path.parent().unwrap().join(file) };
        let why = if !file.is_empty() && !target.exists() {
            Some(format!("no file {}", target.display()))
        } else if fragment.is_empty() {
            None
        } else if target.extension().is_some_and(|e| e == "md") {
            let anchors = if file.is_empty() { None } else { read(&target).map(|t| parse(&t).anchors) };
            let anchors = anchors.as_ref().unwrap_or(&page.anchors);
            (!anchors.contains(fragment)).then(|| format!("no heading with the anchor #{fragment}"))
        } else {
            Some(format!("an anchor into {}, which is not Markdown", target.display()))
        };
        if let Some(why) = why {
            broken.push(format!("{}:{line}: {link} ({why})", path.display()));
        }
    }
    broken
}

/// The commands of a shell code block (or of a transcript's `$ ` lines): each line with its
/// continuations joined, comments dropped, split into the simple commands of pipelines and
/// lists, each as its words after variable assignments and wrappers.
fn commands(info: &str, text: &str) -> Vec<Vec<String>> {
    let shell = matches!(info.split_whitespace().next().unwrap_or(""), "sh" | "bash" | "shell" | "console");
    let mut joined = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_suffix('\\') {
            current.push_str(rest);
            current.push(' ');
            continue;
        }
        current.push_str(line);
        joined.push(std::mem::take(&mut current));
    }
    let mut out = Vec::new();
    for line in joined {
        let line = match line.trim_start().strip_prefix("$ ") {
            Some(rest) => rest.to_string(),
            None if shell => line,
            None => continue,
        };
        let line = match line.find(" #") {
            Some(i) => &line[..i],
            None if line.trim_start().starts_with('#') => continue,
            None => &line[..],
        };
        for simple in line.split(['|', ';', '&', '(', ')']) {
            let mut words = simple.split_whitespace().map(|w| w.trim_matches(['"', '\'']).to_string()).peekable();
            while let Some(w) = words.peek() {
                let assignment = w.split_once('=').is_some_and(|(name, _)| {
                    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                });
                if assignment || matches!(w.as_str(), "env" | "sudo" | "nice" | "exec" | "time") {
                    words.next();
                } else if w == "timeout" {
                    words.next();
                    words.next();
                } else {
                    break;
                }
            }
            let words: Vec<String> = words.collect();
            if !words.is_empty() {
                out.push(words);
            }
        }
    }
    out
}

/// The subcommand a command line runs, as (`cargo xtask` or `regcheck`, subcommand).
fn subcommand(words: &[String]) -> Option<(&'static str, String)> {
    let program = |w: &str| w.rsplit('/').next().unwrap_or(w).to_string();
    let first = program(&words[0]);
    let (tool, rest) = if first == "cargo" && words.get(1).is_some_and(|w| w == "xtask") {
        ("cargo xtask", &words[2..])
    } else if first == "regcheck" {
        ("regcheck", &words[1..])
    } else if first.starts_with("python")
        && words.get(1).is_some_and(|w| w == "-m")
        && words.get(2).is_some_and(|w| w == "regcheck")
    {
        ("regcheck", &words[3..])
    } else {
        return None;
    };
    match rest.first() {
        Some(sub) if !sub.starts_with('-') => Some((tool, sub.clone())),
        _ => None,
    }
}

/// The tasks of xtask's usage text (`cargo xtask help`): the lines of its `tasks:` part that
/// start with a name at two spaces.
fn xtask_tasks(main_rs: &str) -> BTreeSet<String> {
    let usage = &main_rs[main_rs.find("const USAGE").expect("xtask's usage text")..];
    let tasks = &usage[usage.find("tasks:\n").expect("its tasks")..usage.find("\";").expect("its end")];
    tasks
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// The subcommands of the `regcheck` command: the variants of its clap `Command` enum, in
/// clap's kebab case, and clap's own `help`.
fn regcheck_subcommands(lib_rs: &str) -> BTreeSet<String> {
    let start = lib_rs.find("pub enum Command {").expect("the regcheck command's subcommands");
    let body = &lib_rs[start..start + lib_rs[start..].find("\n}").expect("their end")];
    let mut subs: BTreeSet<String> = body
        .lines()
        .filter_map(|l| l.strip_prefix("    "))
        .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()))
        .filter_map(|l| l.split(['(', ',', ' ', '{']).next())
        .map(|variant| {
            let mut kebab = String::new();
            for (i, c) in variant.chars().enumerate() {
                if c.is_ascii_uppercase() && i > 0 {
                    kebab.push('-');
                }
                kebab.push(c.to_ascii_lowercase());
            }
            kebab
        })
        .collect();
    subs.insert("help".into());
    subs
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every page of docs/, with their text.
fn pages() -> Vec<(PathBuf, String)> {
    let root = root();
    let mut paths = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths.into_iter().map(|p| (p.clone(), std::fs::read_to_string(&p).unwrap())).collect()
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let pages = pages();
    assert!(pages.len() >= 10, "only {} pages", pages.len());
    let mut broken = Vec::new();
    let mut links = 0;
    for (path, text) in &pages {
        let page = parse(text);
        links += page.links.len();
        broken.extend(broken_links(path, &page, &read));
    }
    assert!(links >= 50, "only {links} links found: is the parser reading the pages?");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_command_shown_exists() {
    let root = root();
    let tasks = xtask_tasks(&std::fs::read_to_string(root.join("xtask/src/main.rs")).unwrap());
    let subs = regcheck_subcommands(&std::fs::read_to_string(root.join("crates/regcheck-cli/src/lib.rs")).unwrap());
    for t in ["demo", "test", "install", "wheel", "cross"] {
        assert!(tasks.contains(t), "xtask's usage text, as read, lacks {t}: {tasks:?}");
    }
    for s in ["run", "doctor", "rules", "explain"] {
        assert!(subs.contains(s), "the regcheck subcommands, as read, lack {s}: {subs:?}");
    }
    let mut shown = 0;
    let mut unknown = Vec::new();
    for (path, text) in pages() {
        for (info, code, line) in parse(&text).code {
            for words in commands(&info, &code) {
                let Some((tool, sub)) = subcommand(&words) else { continue };
                shown += 1;
                let known = if tool == "regcheck" { &subs } else { &tasks };
                if !known.contains(&sub) {
                    unknown.push(format!(
                        "{}, the code block at line {line}: `{tool} {sub}` ({})",
                        path.display(),
                        words.join(" ")
                    ));
                }
            }
        }
    }
    assert!(shown >= 20, "only {shown} commands found in the code blocks");
    assert!(unknown.is_empty(), "the documentation shows commands that do not exist:\n{}", unknown.join("\n"));
}

/// Every page of the guide says first whom it is for and what it answers (docs/rules.md, which
/// is generated from the catalogue, too); docs/rules.md keeps its lines readable (none over 300
/// characters).
#[test]
fn every_page_starts_with_who_it_is_for() {
    let mut missing = Vec::new();
    for (path, text) in pages() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name == "rules.md" {
            for (i, line) in text.lines().enumerate() {
                if line.chars().count() > 300 {
                    missing.push(format!("{name}:{}: a line of {} characters", i + 1, line.chars().count()));
                }
            }
        }
        if name == "README.md" {
            continue;
        }
        let first = parse(&text).first_paragraph;
        if !(first.starts_with("For: ") && first.contains("Answers: ")) {
            missing.push(format!("{name}: {first:.80}"));
        }
    }
    assert!(
        missing.is_empty(),
        "pages whose first paragraph is not \"For: ... Answers: ...\":\n{}",
        missing.join("\n")
    );
}

#[test]
fn anchors_are_githubs() {
    assert_eq!(anchor("Reaching ctypes and dlsym callers: LD_AUDIT"), "reaching-ctypes-and-dlsym-callers-ld_audit");
    assert_eq!(anchor("The regcheck command"), "the-regcheck-command");
    assert_eq!(
        anchor("Link order: regcheck before the vendor library"),
        "link-order-regcheck-before-the-vendor-library"
    );
    assert_eq!(anchor("aclGetRecentErrMsg() tells what regcheck did"), "aclgetrecenterrmsg-tells-what-regcheck-did");
    let page = parse("# T\n\n## Tests\n\n## Tests\n\n### `REGCHECK_MODE` and x.y\n");
    let want: BTreeSet<String> = ["t", "tests", "tests-1", "regcheck_mode-and-xy"].map(String::from).into();
    assert_eq!(page.anchors, want);
}

/// The checker finds a link to a missing file, to a missing heading of its own page or of
/// another, and an anchor into a file that is not Markdown; it passes good links, and links
/// in code are not links.
#[test]
fn the_link_checker_refuses_broken_links() {
    let dir = root().join("docs");
    let text = "# Page\n\n## A heading\n\n[ok](#a-heading) [ok](usage.md#environment-variables) \
                [ok](../src) [ok](https://example.com/x#y)\n\n[bad](nowhere.md) [bad](#no-heading) \
                [bad](usage.md#no-such-heading) [bad](../Cargo.toml#L1)\n\n```\n[not a link](nowhere.md)\n```\n";
    let page = parse(text);
    assert_eq!(page.links.len(), 8);
    let broken = broken_links(&dir.join("page.md"), &page, &read);
    let named: Vec<&str> = broken.iter().map(|b| b.split(": ").nth(1).unwrap().split(' ').next().unwrap()).collect();
    assert_eq!(named, ["nowhere.md", "#no-heading", "usage.md#no-such-heading", "../Cargo.toml#L1"], "{broken:#?}");
}

#[test]
fn the_command_reader_finds_subcommands_where_a_shell_runs_them() {
    let sh = "cargo xtask demo    # build\nREGCHECK_STACK=2 \\\n  regcheck doctor\n\
              timeout 60 ./app & regcheck run --audit pytest tests/\npython3 -m regcheck doctor\n\
              cc app.c $(pkg-config --cflags --libs regcheck regcheck-sim)\n# regcheck nothing\n\
              <prefix>/bin/regcheck --help\n";
    let found: Vec<_> = commands("sh", sh).iter().filter_map(|w| subcommand(w)).collect();
    let want = [("cargo xtask", "demo"), ("regcheck", "doctor"), ("regcheck", "run"), ("regcheck", "doctor")];
    assert_eq!(found, want.map(|(t, s)| (t, s.to_string())));
    // In a transcript only the `$ ` lines are commands; the output is not.
    let transcript = "$ regcheck rules\nregcheck runs without its LD_AUDIT module\n";
    let found: Vec<_> = commands("", transcript).iter().filter_map(|w| subcommand(w)).collect();
    assert_eq!(found, [("regcheck", "rules".to_string())]);
    let main_rs = "const USAGE: &str = \"\\\ntasks:\n  demo    x\n          more\n  wheel [--out DIR]\n\";";
    assert_eq!(xtask_tasks(main_rs), ["demo", "wheel"].map(String::from).into());
    let lib_rs = "pub enum Command {\n    /// Run.\n    Run(run::RunArgs),\n    DoctorNow(d::A),\n}\n";
    assert_eq!(regcheck_subcommands(lib_rs), ["doctor-now", "help", "run"].map(String::from).into());
}

//! Every test that runs a program from outside the workspace (a Python
//! module, a browser, a checker, a proxy) skips visibly when it is absent:
//! `hado_testing::tool_available` says `SKIPPED … needs …` on a line
//! of its own, and fails under CI, where everything must be here. A test
//! that called `python3` with no such check failed on a fresh machine
//! instead, for want of a module its siblings skip without.
//!
//! Read from the source: each test's own functions, and the functions of
//! its file they call, are followed; a `Command::new("program")` among them
//! needs a `tool_available` (or a line saying `SKIPPED`) among them too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Programs every machine that builds Hado has: a shell, and git for the
/// checkout itself.
const EVERYWHERE: &[&str] = &["sh", "bash", "git"];

/// Helpers in other files that skip visibly by themselves when what they
/// run is absent: a test that calls one is guarded by it.
const GUARDING_HELPERS: &[&str] = &["MailSink::start("];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("cli sits in the workspace").to_path_buf()
}

/// Every `.rs` file below `folder`.
fn rust_files(folder: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.map(Result::unwrap) {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            found.push(path);
        }
    }
}

/// `text` with every comment, string and character literal blanked out
/// (same length, so places still line up), for finding braces and names.
fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut index = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for byte in &mut out[from..to.min(bytes.len())] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    };
    while index < bytes.len() {
        let rest = &text[index..];
        if rest.starts_with("//") {
            let end = rest.find('\n').map_or(bytes.len(), |end| index + end);
            blank(&mut out, index, end);
            index = end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(bytes.len(), |end| index + end + 2);
            blank(&mut out, index, end);
            index = end;
        } else if rest.starts_with("r#\"") || rest.starts_with("r\"") {
            let hashes = rest[1..].chars().take_while(|c| *c == '#').count();
            let closing = format!("\"{}", "#".repeat(hashes));
            let open = 2 + hashes;
            let end = rest[open..]
                .find(&closing)
                .map_or(bytes.len(), |end| index + open + end + closing.len());
            blank(&mut out, index, end);
            index = end;
        } else if bytes[index] == b'"' {
            let mut end = index + 1;
            while end < bytes.len() && bytes[end] != b'"' {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, index, end + 1);
            index = end + 1;
        } else if bytes[index] == b'\'' && rest.len() > 2 {
            // A character literal ('{', '\n', '\u{200D}'), not a lifetime.
            let close = if rest.as_bytes()[1] == b'\\' {
                rest[2..].find('\'').map(|at| at + 2)
            } else {
                Some(rest[1..].chars().next().map_or(1, char::len_utf8) + 1)
            };
            match close.filter(|at| rest.as_bytes().get(*at) == Some(&b'\'')) {
                Some(at) => {
                    blank(&mut out, index, index + at + 1);
                    index += at + 1;
                }
                None => index += 1,
            }
        } else {
            index += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One function of a file: its name, whether it is a test, its body's text.
struct Function {
    name: String,
    test: bool,
    body: std::ops::Range<usize>,
}

/// The functions of a file, found in its code with literals blanked.
fn functions(code: &str) -> Vec<Function> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("fn ").map(|at| from + at) {
        from = at + 3;
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String =
            code[at + 3..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let Some(open) = code[at..].find(['{', ';']).map(|open| at + open) else { break };
        if code.as_bytes()[open] == b';' || name.is_empty() {
            continue;
        }
        let mut depth = 0;
        let mut close = open;
        for (offset, byte) in code.as_bytes()[open..].iter().enumerate() {
            match byte {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + offset;
                        break;
                    }
                }
                _ => {}
            }
        }
        let attributes_from = code[..at].rfind(['}', ';']).map_or(0, |end| end + 1);
        let test = code[attributes_from..at].contains("test");
        found.push(Function { name, test, body: open..close });
    }
    found
}

#[test]
fn every_test_that_runs_an_outside_program_skips_visibly_without_it() {
    let root = workspace();
    let mut files = Vec::new();
    for folder in [
        "cli/tests",
        "core/tests",
        "core/src",
        "gateway-http/tests",
        "gateway-mcp/tests",
        "gateway/src",
        "gateway-http/src",
        "gateway-mcp/src",
    ] {
        rust_files(&root.join(folder), &mut files);
    }
    let mut unguarded = Vec::new();
    let mut tests_with_tools = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let code = code_only(&text);
        let found = functions(&code);
        let by_name: BTreeMap<&str, Vec<&Function>> =
            found.iter().fold(BTreeMap::new(), |mut map, function| {
                map.entry(function.name.as_str()).or_default().push(function);
                map
            });
        // Story functions run by `on_both_backends!` are tests too.
        let stories: BTreeSet<&str> = text
            .split("on_both_backends!(")
            .skip(1)
            .flat_map(|list| list.split(')').next().unwrap_or_default().split(','))
            .map(str::trim)
            .collect();
        for entry in found
            .iter()
            .filter(|function| function.test || stories.contains(function.name.as_str()))
        {
            let mut seen = BTreeSet::new();
            let mut pending = vec![entry];
            let (mut tools, mut guarded) = (BTreeSet::new(), false);
            while let Some(function) = pending.pop() {
                if !seen.insert(function.body.start) {
                    continue;
                }
                let body = &text[function.body.clone()];
                let body_code = &code[function.body.clone()];
                guarded |= body_code.contains("tool_available(")
                    || body.contains("SKIPPED")
                    || GUARDING_HELPERS.iter().any(|helper| body_code.contains(helper));
                for (at, _) in body_code.match_indices("Command::new(") {
                    let argument = &body[at + "Command::new(".len()..];
                    if let Some(program) =
                        argument.strip_prefix('"').and_then(|rest| rest.split('"').next())
                        && !EVERYWHERE.contains(&program)
                    {
                        tools.insert(program.to_owned());
                    }
                }
                // `drop` runs by itself: a Drop impl cleans up what its
                // value's maker, guarded or not, set up.
                for (name, callees) in by_name.iter().filter(|(name, _)| **name != "drop") {
                    let called = body_code.match_indices(&format!("{name}(")).any(|(at, _)| {
                        !body_code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                            && !body_code[..at].ends_with("fn ")
                    });
                    if called {
                        pending.extend(callees.iter().copied());
                    }
                }
            }
            if !tools.is_empty() {
                tests_with_tools += 1;
                if !guarded {
                    let shown = file.strip_prefix(&root).unwrap().display();
                    unguarded.push(format!("{shown}: {} runs {tools:?}", entry.name));
                }
            }
        }
    }
    assert!(
        tests_with_tools > 10,
        "the scan finds the tests that run outside programs ({tests_with_tools})"
    );
    assert!(
        unguarded.is_empty(),
        "tests that run an outside program with no visible skip when it is absent \
         (hado_testing::tool_available):\n{}",
        unguarded.join("\n")
    );
}

#[test]
fn the_scan_sees_through_literals_and_follows_calls() {
    let text = r##"
fn helper() { let _ = Command::new("python3").arg("{"); }
#[test]
fn bare() { helper(); let brace = '}'; }
#[test]
fn checked() { if !tool_available("t", true, "x") { return; } helper(); }
"##;
    let code = code_only(text);
    let names: Vec<(String, bool)> =
        functions(&code).iter().map(|function| (function.name.clone(), function.test)).collect();
    assert_eq!(
        names,
        vec![("helper".to_owned(), false), ("bare".to_owned(), true), ("checked".to_owned(), true)]
    );
    assert_eq!(code.len(), text.len());
    assert!(!code.contains("python3") && code.contains("Command::new("));
}

//! The docs hold together: every relative link and picture in README.md,
//! ARCHITECTURE.md, BENCHMARKS.md and the guides under `docs/` names a file
//! that exists, and every `#anchor` a heading of the file it points into;
//! the README stays short and opens with what a newcomer needs; each guide
//! stays within its length.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("cli sits in the workspace").to_path_buf()
}

/// The guides under `docs/`, by name.
fn guides() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(workspace().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "md"))
        .collect();
    found.sort();
    found
}

/// The Markdown files whose links must resolve.
fn checked_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md"]
        .iter()
        .map(|name| workspace().join(name))
        .collect();
    files.extend(guides());
    files
}

/// `text` without its fenced blocks and inline code spans, which hold
/// examples rather than links; each removed line is kept as an empty one.
fn prose(text: &str) -> String {
    let mut fenced = false;
    let mut kept = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            let mut inside_code = false;
            for character in line.chars() {
                if character == '`' {
                    inside_code = !inside_code;
                } else if !inside_code {
                    kept.push(character);
                }
            }
        }
        kept.push('\n');
    }
    kept
}

/// Every link target in `text`: `[text](target)`, `![alt](target)` and
/// `<img src="target">`, the optional title after a space left out.
fn targets(text: &str) -> Vec<String> {
    let text = prose(text);
    let mut found = Vec::new();
    for (start, _) in text.match_indices("](") {
        let rest = &text[start + 2..];
        let end = rest.find(')').unwrap_or(rest.len());
        let target = rest[..end].split_whitespace().next().unwrap_or_default();
        found.push(target.to_owned());
    }
    for (start, _) in text.match_indices("src=\"") {
        let rest = &text[start + 5..];
        found.push(rest[..rest.find('"').unwrap_or(rest.len())].to_owned());
    }
    found
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces
/// as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|character| character.is_alphanumeric() || matches!(character, ' ' | '-' | '_'))
        .map(|character| if character == ' ' { '-' } else { character })
        .collect()
}

/// The anchors of a Markdown file's headings, with GitHub's `-1`, `-2` for
/// a repeated one.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let base = slug(line.trim_start_matches('#'));
        let mut anchor = base.clone();
        let mut repeat = 0;
        while found.contains(&anchor) {
            repeat += 1;
            anchor = format!("{base}-{repeat}");
        }
        found.insert(anchor);
    }
    found
}

/// Where `target` leads from `file`, or why it leads nowhere.
fn resolve(file: &Path, target: &str) -> Result<(), String> {
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let destination = if path.is_empty() {
        file.to_path_buf()
    } else {
        let joined = file.parent().unwrap().join(path);
        // Normalised by hand, so that a link leaving the repository is seen.
        let mut normal = PathBuf::new();
        for component in joined.components() {
            match component {
                Component::ParentDir => {
                    normal.pop();
                }
                Component::CurDir => {}
                other => normal.push(other),
            }
        }
        normal
    };
    if !destination.starts_with(workspace()) {
        return Err("leads out of the repository".into());
    }
    if !destination.exists() {
        return Err("names nothing".into());
    }
    if let Some(anchor) = anchor {
        if destination.extension().is_none_or(|extension| extension != "md") {
            return Err("has an anchor into a file that is not Markdown".into());
        }
        let text = std::fs::read_to_string(&destination).unwrap();
        if !anchors(&text).contains(anchor) {
            return Err(format!("names no heading of {}", destination.display()));
        }
    }
    Ok(())
}

#[test]
fn every_relative_link_and_picture_in_the_docs_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in checked_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for target in targets(&text) {
            if target.is_empty()
                || target.starts_with("http://")
                || target.starts_with("https://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            checked += 1;
            if let Err(why) = resolve(&file, &target) {
                broken.push(format!("{}: {target} {why}", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked > 40, "the links were found ({checked})");
}

#[test]
fn the_link_check_sees_what_is_broken() {
    let readme = workspace().join("README.md");
    assert!(resolve(&readme, "docs/person.md").is_ok());
    assert!(resolve(&readme, "docs/person.md#the-states").is_ok());
    assert!(resolve(&readme, "#quick-start").is_ok());
    assert!(resolve(&readme, "docs/nobody.md").is_err());
    assert!(resolve(&readme, "docs/person.md#no-such-heading").is_err());
    assert!(resolve(&readme, "#no-such-heading").is_err());
    assert!(resolve(&readme, "../../etc/passwd").is_err(), "out of the repository");
    assert!(resolve(&readme, "Cargo.toml#section").is_err());
    let text = "[a](x.md) `[b](y.md)` <img src=\"p.png\" alt=\"\">\n```\n[c](z.md)\n```\n";
    assert_eq!(targets(text), ["x.md", "p.png"]);
    assert_eq!(
        slug(" The `hado up` CLI: on one machine (SQLite)"),
        "the-hado-up-cli-on-one-machine-sqlite"
    );
    assert!(anchors("# A\n## A\n```\n# B\n```\n").contains("a-1"));
}

#[test]
fn the_readme_is_short_and_opens_with_what_a_newcomer_needs() {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 300, "README.md is {lines} lines, at most 300");
    let opening: String = readme.lines().take(60).collect::<Vec<_>>().join("\n");
    let manifest = std::fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    let rust_version = manifest
        .lines()
        .find_map(|line| line.strip_prefix("rust-version = "))
        .expect("the workspace names its rust-version")
        .trim_matches('"');
    for needed in [
        "cargo run -p hado -- up",
        "scripts/test",
        "http://127.0.0.1:8080/",
        &format!("Rust {rust_version}"),
        "<img src=\"docs/inbox-wide-",
        "<img src=\"docs/inbox-phone-",
    ] {
        assert!(opening.contains(needed), "the README's first 60 lines say {needed:?}");
    }
    for guide in ["person", "agents", "sources", "operators", "contributors"] {
        let link = format!("](docs/{guide}.md)");
        assert!(readme.contains(&link), "the README sends its reader to docs/{guide}.md");
    }
}

#[test]
fn every_guide_is_at_most_500_lines() {
    let guides = guides();
    assert!(guides.len() >= 5, "the five guides");
    for guide in guides {
        let lines = std::fs::read_to_string(&guide).unwrap().lines().count();
        assert!(lines <= 500, "{} is {lines} lines, at most 500", guide.display());
    }
}

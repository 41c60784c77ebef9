//! ARCHITECTURE.md's invariants, checked on the source tree, so that a
//! change that breaks one fails here rather than in a review: SQL only in
//! core's storage, no clock read in the domain, no gateway or contract
//! crate depending on sqlx, the contract crate free of process plumbing,
//! core free of HTTP serving, core's engine free of network I/O and of the
//! edges and loops that call it, no
//! circle of `use crate::` imports between the files of any crate, and no
//! source file over 400 lines before its tests.

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("cli sits in the workspace").to_path_buf()
}

/// Every `.rs` file below `folder` (or the one file it names), with its text.
fn sources(folder: &Path) -> Vec<(PathBuf, String)> {
    if folder.is_file() {
        return vec![(folder.to_path_buf(), std::fs::read_to_string(folder).unwrap())];
    }
    let mut found = Vec::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current)
            .unwrap_or_else(|error| panic!("{}: {error}", current.display()))
        {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                found.push((path, text));
            }
        }
    }
    assert!(!found.is_empty(), "{} holds Rust files", folder.display());
    found
}

/// The `[dependencies]` section of a crate's manifest (not dev- or build-).
fn dependencies(krate: &str) -> String {
    let manifest = std::fs::read_to_string(workspace().join(krate).join("Cargo.toml")).unwrap();
    let start =
        manifest.find("\n[dependencies]").unwrap_or_else(|| panic!("{krate} has dependencies"));
    let rest = &manifest[start + 1..];
    let end = rest[1..].find("\n[").map_or(rest.len(), |index| index + 1);
    rest[..end].to_owned()
}

fn offenders(folder: &str, skip: &[&str], patterns: &[&str]) -> Vec<String> {
    let root = workspace();
    sources(&root.join(folder))
        .into_iter()
        .filter(|(path, _)| {
            !skip.iter().any(|skipped| path.strip_prefix(&root).unwrap().starts_with(skipped))
        })
        .flat_map(|(path, text)| {
            let shown = path.strip_prefix(&root).unwrap().display().to_string();
            text.lines()
                .enumerate()
                .filter(|(_, line)| !line.trim_start().starts_with("//"))
                .filter(|(_, line)| patterns.iter().any(|pattern| line.contains(pattern)))
                .map(|(number, line)| format!("{shown}:{}: {}", number + 1, line.trim()))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn only_core_storage_knows_sql() {
    let found = offenders(
        "core/src",
        &["core/src/storage", "core/src/testing"],
        &["sqlx::query", "\"SELECT ", "\"INSERT ", "\"UPDATE ", "\"DELETE ", "select_events!"],
    );
    assert!(found.is_empty(), "SQL outside core/src/storage:\n{}", found.join("\n"));
    for folder in ["gateway-http/src", "gateway-mcp/src", "proto/src", "runtime/src", "cli/src"] {
        let found = offenders(folder, &[], &["sqlx"]);
        assert!(found.is_empty(), "{folder} uses sqlx:\n{}", found.join("\n"));
    }
}

#[test]
fn the_domain_never_reads_the_clock_or_does_io() {
    let found = offenders(
        "core/src/domain",
        &[],
        &[
            "Utc::now",
            "Local::now",
            "SystemTime",
            "Instant::now",
            "std::fs",
            "tokio::",
            "async fn",
            "sqlx",
            "reqwest",
        ],
    );
    assert!(found.is_empty(), "the domain must stay pure:\n{}", found.join("\n"));
}

#[test]
fn gateways_and_the_contract_do_not_depend_on_storage_and_the_contract_holds_no_plumbing() {
    for krate in ["gateway-http", "gateway-mcp", "proto", "runtime"] {
        let dependencies = dependencies(krate);
        for forbidden in ["sqlx", "hado-core"] {
            assert!(
                !dependencies.lines().any(|line| line.starts_with(forbidden)),
                "{krate} depends on {forbidden}:\n{dependencies}"
            );
        }
    }
    let contract = dependencies("proto");
    for plumbing in ["tracing-subscriber", "metrics-exporter-prometheus", "axum", "hyper"] {
        assert!(
            !contract.lines().any(|line| line.starts_with(plumbing)),
            "the contract crate pulls in {plumbing}:\n{contract}"
        );
    }
    let core = dependencies("core");
    assert!(
        !core
            .lines()
            .any(|line| line.starts_with("axum") || line.contains("features = [\"gateway\"]")),
        "core serves no HTTP:\n{core}"
    );
}

#[test]
fn the_engine_depends_on_no_edge_or_loop_of_core() {
    let found = offenders(
        "core/src/engine",
        &[],
        &["crate::grpc", "crate::delivery", "crate::telegram", "crate::scheduler", "tonic::"],
    );
    assert!(
        found.is_empty(),
        "the engine is what the edges and loops call, never the other way round:\n{}",
        found.join("\n")
    );
    // Its only way out apart from storage is `network::Network`.
    let found = offenders(
        "core/src/engine",
        &["core/src/engine/tests.rs"],
        &["reqwest", "tokio::net", "lookup_host", "outbound_tls", "check_new", "Internet"],
    );
    assert!(
        found.is_empty(),
        "the engine does no network I/O of its own (ask `self.network`):\n{}",
        found.join("\n")
    );
    let found = offenders("core/src/delivery", &[], &["crate::grpc"]);
    assert!(
        found.is_empty(),
        "the delivery loop does not depend on the gRPC edge:\n{}",
        found.join("\n")
    );
}

/// No source file grows past 400 lines before its unit tests: a file that
/// does has more than one job. The code generated from the `.proto` files
/// and the integration tests are not counted.
#[test]
fn no_source_file_is_over_four_hundred_lines_before_its_tests() {
    const MOST: usize = 400;
    let root = workspace();
    let mut found = Vec::new();
    for folder in
        ["core/src", "gateway-http/src", "gateway-mcp/src", "proto/src", "runtime/src", "cli/src"]
    {
        for (path, text) in sources(&root.join(folder)) {
            let shown = path.strip_prefix(&root).unwrap().display().to_string();
            if shown.starts_with("proto/src/generated") {
                continue;
            }
            let code = text.lines().take_while(|line| *line != "#[cfg(test)]").count();
            if code > MOST {
                found.push(format!("{shown}: {code} lines"));
            }
        }
    }
    assert!(found.is_empty(), "over {MOST} lines before the tests:\n{}", found.join("\n"));
}

/// The paths a `use` tree names, each as its segments: `a::{b, c::{d, e as f}}`
/// gives `a::b`, `a::c::d` and `a::c::e`.
fn use_paths(prefix: &[String], tree: &str, paths: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or_default();
        let mut segments = prefix.to_vec();
        segments.extend(
            path.split("::")
                .map(str::trim)
                .filter(|segment| !segment.is_empty() && *segment != "self" && *segment != "*")
                .map(str::to_owned),
        );
        paths.push(segments);
        return;
    };
    let mut inner_prefix = prefix.to_vec();
    inner_prefix.extend(
        tree[..open]
            .split("::")
            .map(str::trim)
            .filter(|segment| !segment.is_empty())
            .map(str::to_owned),
    );
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut depth, mut start) = (0, 0);
    for (index, character) in inner.char_indices() {
        match character {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                use_paths(&inner_prefix, &inner[start..index], paths);
                start = index + 1;
            }
            _ => {}
        }
    }
    if !inner[start..].trim().is_empty() {
        use_paths(&inner_prefix, &inner[start..], paths);
    }
}

/// The file of a crate that a `crate::` path lands in: its longest prefix
/// that is a module file, else the crate's root.
fn module_file(source: &Path, segments: &[String]) -> PathBuf {
    let mut found = None;
    for length in 1..=segments.len() {
        let base: PathBuf = segments[..length]
            .iter()
            .fold(source.to_path_buf(), |path, segment| path.join(segment));
        for candidate in [base.with_extension("rs"), base.join("mod.rs")] {
            if candidate.is_file() {
                found = Some(candidate);
            }
        }
    }
    found.unwrap_or_else(|| {
        if source.join("lib.rs").is_file() { source.join("lib.rs") } else { source.join("main.rs") }
    })
}

#[test]
fn no_circle_of_crate_imports_between_files() {
    let root = workspace();
    let mut circles = Vec::new();
    for krate in ["core", "gateway-http", "gateway-mcp", "proto", "runtime", "cli"] {
        let source = root.join(krate).join("src");
        let mut edges: std::collections::BTreeMap<PathBuf, std::collections::BTreeSet<PathBuf>> =
            Default::default();
        for (path, text) in sources(&source) {
            if path.starts_with(source.join("generated")) {
                continue;
            }
            let code: String = text
                .lines()
                .take_while(|line| *line != "#[cfg(test)]")
                .filter(|line| !line.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            let mut paths = Vec::new();
            for statement in code.split("use crate::").skip(1) {
                use_paths(
                    &[],
                    &statement[..statement.find(';').unwrap_or(statement.len())],
                    &mut paths,
                );
            }
            for segments in paths {
                let target = module_file(&source, &segments);
                if target != path {
                    edges.entry(path.clone()).or_default().insert(target);
                }
            }
        }
        // Depth first; a file met again on the current path closes a circle.
        fn visit(
            file: &PathBuf,
            edges: &std::collections::BTreeMap<PathBuf, std::collections::BTreeSet<PathBuf>>,
            path: &mut Vec<PathBuf>,
            done: &mut std::collections::BTreeSet<PathBuf>,
            circles: &mut Vec<Vec<PathBuf>>,
        ) {
            if let Some(start) = path.iter().position(|on_path| on_path == file) {
                circles.push(path[start..].iter().chain([file]).cloned().collect());
                return;
            }
            if !done.insert(file.clone()) {
                return;
            }
            path.push(file.clone());
            for next in edges.get(file).into_iter().flatten() {
                visit(next, edges, path, done, circles);
            }
            path.pop();
        }
        let mut done = std::collections::BTreeSet::new();
        let mut found = Vec::new();
        for file in edges.keys() {
            visit(file, &edges, &mut Vec::new(), &mut done, &mut found);
        }
        circles.extend(found.into_iter().map(|circle| {
            circle
                .iter()
                .map(|file| file.strip_prefix(&root).unwrap().display().to_string())
                .collect::<Vec<_>>()
                .join(" -> ")
        }));
    }
    assert!(
        circles.is_empty(),
        "files that import each other (give what both need a home below both):\n{}",
        circles.join("\n")
    );
}

//! ARCHITECTURE.md's invariants, checked so that a change that breaks one
//! fails here rather than in a review. The layers are read from Cargo's
//! own graph (`cargo metadata`): no I/O in the domain's tree, sqlx in
//! hado-storage alone, neither sqlx nor tonic nor an edge under the
//! engine, storage depended on by the engine, core's composition root and
//! the harness only. What the graph cannot see is read from the source:
//! no clock read in the domain, no network I/O in the engine's operations,
//! nothing in core but its composition root naming storage, the contract
//! crate free of process plumbing, core free of HTTP serving, the words
//! crate on chrono alone, no circle of imports between the files of any crate (every `crate::` and
//! `super::` path counts, inline ones too), no
//! source file over 400 lines before its tests, and the map itself true:
//! every name ARCHITECTURE.md gives in backticks exists, and every `HADO_*`
//! variable the code reads is in the README or a guide under `docs/`, and no
//! other; and, read as Rust with `syn`, no production function over 80
//! lines (route tables aside) and no glob import of a crate's own modules
//! outside its tests.

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

/// The workspace's crates, by folder, as its manifest lists them: every
/// rule below holds for a crate added later too.
fn members() -> Vec<String> {
    let manifest = std::fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    let list = manifest
        .split_once("members = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .expect("the workspace lists its members")
        .0;
    list.split(',').map(|member| member.trim().trim_matches('"').to_owned()).collect()
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

/// Each production line (before a file's `#[cfg(test)]`) under `folder`,
/// outside `skip`, that holds one of `patterns`.
fn offenders(folder: &str, skip: &[&str], patterns: &[&str]) -> Vec<String> {
    let root = workspace();
    sources(&root.join(folder))
        .into_iter()
        .filter(|(path, _)| {
            !skip.iter().any(|skipped| path.strip_prefix(&root).unwrap().starts_with(skipped))
        })
        .flat_map(|(path, text)| {
            let shown = path.strip_prefix(&root).unwrap().display().to_string();
            // The rules are about what runs: a file's test module may set
            // up its scenario with SQL or a socket.
            text.lines()
                .take_while(|line| *line != "#[cfg(test)]")
                .enumerate()
                .filter(|(_, line)| !line.trim_start().starts_with("//"))
                .filter(|(_, line)| patterns.iter().any(|pattern| line.contains(pattern)))
                .map(|(number, line)| format!("{shown}:{}: {}", number + 1, line.trim()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The crates `krate` (a package name) builds on through normal
/// dependencies (not dev- or build-), as Cargo resolves them for this
/// machine: `depth` 1 for its direct ones, none for its whole tree.
fn builds_on(krate: &str, depth: Option<u32>) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = std::process::Command::new(cargo);
    command
        .args(["tree", "--offline", "--edges", "normal", "--prefix", "none", "--package", krate])
        .current_dir(workspace());
    if let Some(depth) = depth {
        command.args(["--depth", &depth.to_string()]);
    }
    let output = command.output().expect("cargo tree runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let mut names: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// A workspace member's package name, from its manifest.
fn package(member: &str) -> String {
    let manifest = std::fs::read_to_string(workspace().join(member).join("Cargo.toml")).unwrap();
    manifest
        .lines()
        .find_map(|line| line.strip_prefix("name = "))
        .map(|name| name.trim_matches('"').to_owned())
        .unwrap_or_else(|| panic!("{member} names its package"))
}

/// The layers, as Cargo keeps them: the domain does no I/O (nothing that
/// could reach a disk, a socket or a database is in its tree), storage is
/// the one crate that depends on sqlx, the engine depends on neither sqlx
/// nor tonic nor any edge, and nothing but core's composition root, the
/// `hado` binary and the test harness depends on storage.
#[test]
fn the_crate_graph_keeps_the_layers() {
    let domain = builds_on("hado-domain", None);
    for io in ["tokio", "sqlx", "tonic", "hyper", "reqwest", "mio", "socket2"] {
        assert!(!domain.iter().any(|krate| krate == io), "hado-domain builds on {io}: {domain:?}");
    }
    for member in members() {
        let krate = package(&member);
        let direct = builds_on(&krate, Some(1));
        if krate != "hado-storage" {
            assert!(!direct.iter().any(|dep| dep == "sqlx"), "{krate} depends on sqlx");
        }
        if direct.iter().any(|dep| dep == "hado-storage") {
            assert!(
                ["hado-engine", "hado-core", "hado-testing", "hado"].contains(&krate.as_str()),
                "{krate} depends on hado-storage; only the engine, core's composition root, \
                 the hado binary (`hado up`'s file) and the test harness do"
            );
        }
    }
    let engine = builds_on("hado-engine", Some(1));
    for above in ["sqlx", "tonic", "hado-core", "hado-gateway", "axum", "hado-testing"] {
        assert!(!engine.iter().any(|dep| dep == above), "hado-engine depends on {above}");
    }
    // The test doors of storage (SQL behind core's back) open for the
    // harness alone.
    for krate in members() {
        let dependencies = dependencies(&krate);
        if krate != "testing" {
            assert!(
                !dependencies
                    .lines()
                    .any(|line| line.starts_with("hado-storage") && line.contains("testing")),
                "{krate} opens storage's test doors"
            );
        }
    }
}

/// What the graph cannot see: the domain reads no clock (chrono can), and
/// takes time as an argument.
#[test]
fn the_domain_never_reads_the_clock() {
    let found = offenders(
        "domain/src",
        &[],
        &["Utc::now", "Local::now", "SystemTime", "Instant::now", "std::fs", "TcpStream"],
    );
    assert!(found.is_empty(), "the domain must stay pure:\n{}", found.join("\n"));
}

#[test]
fn gateways_and_the_contract_do_not_depend_on_core_and_the_contract_holds_no_plumbing() {
    for krate in members().into_iter().filter(|krate| !["testing", "cli"].contains(&krate.as_str()))
    {
        let dependencies = dependencies(&krate);
        assert!(
            !dependencies.lines().any(|line| line.starts_with("hado-core")),
            "{krate} depends on hado-core:\n{dependencies}"
        );
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
        !core.lines().any(|line| line.starts_with("axum") || line.starts_with("hado-gateway")),
        "core serves no HTTP:\n{core}"
    );
    // Every word a person reads builds on chrono alone, so that core and
    // gateway-http never wait on a protocol crate to get them.
    let words = dependencies("words");
    let named: Vec<_> = words
        .lines()
        .skip(1)
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .collect();
    assert!(
        named.iter().all(|line| line.starts_with("chrono")),
        "hado-words needs only chrono:\n{words}"
    );
}

/// What the graph cannot see inside the engine crate: its operations reach
/// the network only through `network::Network`, whose one real
/// implementation (with the address rules and TLS it needs) sits beside
/// them; and inside core, the delivery loop does not call the gRPC edge.
#[test]
fn the_engine_does_no_network_io_of_its_own() {
    let found = offenders(
        "engine/src",
        &["engine/src/network.rs", "engine/src/targets.rs", "engine/src/outbound_tls.rs"],
        &["reqwest", "tokio::net", "lookup_host", "outbound_tls::", "check_new", "Internet"],
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

/// Core depends on storage to open it: its composition root hands
/// the store to the engine, and the edges and loops read what the engine
/// hands them.
/// `status.rs`, the one translation into gRPC statuses, tells a storage
/// that is away from one that failed.
const STORAGE_CALLERS: &[&str] =
    &["core/src/lib.rs", "core/src/main.rs", "core/src/config.rs", "core/src/status.rs"];

#[test]
fn nothing_in_core_but_its_composition_root_names_storage() {
    let found: Vec<String> = offenders("core/src", STORAGE_CALLERS, &["hado_storage"]);
    assert!(
        found.is_empty(),
        "the edges and loops read what the engine hands them, never storage:\n{}",
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
    for krate in members() {
        for (path, text) in sources(&root.join(krate).join("src")) {
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

/// The module a file of a crate is: `grpc/inbox.rs` and `grpc/inbox/mod.rs`
/// are `grpc::inbox`, `lib.rs` and `main.rs` the root.
fn module_of(source: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(source).unwrap().with_extension("");
    let mut segments: Vec<String> =
        relative.iter().map(|segment| segment.to_string_lossy().into_owned()).collect();
    if matches!(segments.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        segments.pop();
    }
    segments
}

/// Every path into the crate that `code` (a file of module `module`) names,
/// wherever it is written: in a `use` line, or inline as
/// `crate::metrics_endpoint::start(…)` or `super::Shared`. Each is given
/// from the crate's root, as its segments.
fn crate_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let is_ident = |character: char| character.is_alphanumeric() || character == '_';
    let mut paths = Vec::new();
    for keyword in ["crate::", "super::"] {
        for (start, _) in code.match_indices(keyword) {
            if code[..start].chars().next_back().is_some_and(is_ident)
                || code[..start].ends_with("super::")
            {
                continue;
            }
            let mut rest = &code[start + keyword.len()..];
            let prefix = if keyword == "crate::" {
                Vec::new()
            } else {
                let mut up = 1;
                while let Some(further) = rest.strip_prefix("super::") {
                    rest = further;
                    up += 1;
                }
                module[..module.len().saturating_sub(up)].to_vec()
            };
            // The path runs over names and `::`, and over one brace of a
            // `use` tree if it opens one.
            let mut end = 0;
            for (index, character) in rest.char_indices() {
                if character == '{' {
                    let mut depth = 0;
                    end = rest.len();
                    for (inner, character) in rest[index..].char_indices() {
                        depth += match character {
                            '{' => 1,
                            '}' => -1,
                            _ => 0,
                        };
                        if depth == 0 {
                            end = index + inner + 1;
                            break;
                        }
                    }
                    break;
                }
                if !(is_ident(character) || character == ':' || character == '*') {
                    break;
                }
                end = index + character.len_utf8();
            }
            use_paths(&prefix, rest[..end].trim_end_matches(':'), &mut paths);
        }
    }
    paths
}

#[test]
fn an_inline_path_is_an_import_too() {
    let module = ["grpc".to_owned(), "inbox".to_owned()];
    let code = "use crate::{a::B, c::{d, e as f}};\n\
                fn g() { crate::metrics_endpoint::start(&x); super::super::h::I::new(); }\n\
                let _ = super::j::<K>(); pub(crate) fn l() {} hado_crate::m();";
    let found: Vec<String> =
        crate_paths(code, &module).into_iter().map(|segments| segments.join("::")).collect();
    assert_eq!(
        found,
        ["a::B", "c::d", "c::e", "metrics_endpoint::start", "h::I::new", "grpc::j"],
        "every path into the crate, from its root"
    );
}

#[test]
fn no_circle_of_crate_imports_between_files() {
    let root = workspace();
    let mut circles = Vec::new();
    for krate in members() {
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
            for segments in crate_paths(&code, &module_of(&source, &path)) {
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

/// Names in ARCHITECTURE.md's backticks that are not Hado's own: SQL,
/// HTTP headers and methods, gRPC codes, outside crates, tools, protocols'
/// words. Every other backticked name must be a path, module or item that
/// exists, so that the map cannot name what was renamed or removed.
const OUTSIDE_NAMES: &[&str] = &[
    "ABORTED",
    "Any",
    "Authorization",
    "BIGINT",
    "COMMIT",
    "Host",
    "IN",
    "INSERT",
    "LISTEN",
    "NO_COLOR",
    "NOTIFY",
    "Origin",
    "RESOURCE_EXHAUSTED",
    "RetryInfo",
    "UNAVAILABLE",
    "UPDATE",
    "busy_timeout",
    "callback_data",
    "deny_unknown_fields",
    "duplicates",
    "flatten",
    "impl",
    "ipnet",
    "isError",
    "protoc",
    "protox",
    "query_only",
    "serde_path_to_error",
    "sha2",
    "liveness",
    "INVALID_ARGUMENT",
    "tools/call",
    // Kept with the team's shared documents, beside the repository.
    "DESIGN.md",
];

/// Every file git would see: tracked, and new ones it does not ignore. A
/// copy without git (an unpacked archive) is walked instead, build output
/// and dependencies left out.
fn repository_files() -> Vec<String> {
    let listed = std::process::Command::new("git")
        .args(["ls-files", "--cached", "--others", "--exclude-standard"])
        .current_dir(workspace())
        .output();
    if let Ok(listed) = listed
        && listed.status.success()
    {
        return String::from_utf8_lossy(&listed.stdout).lines().map(str::to_owned).collect();
    }
    let root = workspace();
    let mut found = Vec::new();
    let mut pending = vec![root.clone()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if ["target", ".git", "node_modules"].iter().any(|skipped| name == *skipped) {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(relative) = path.strip_prefix(&root) {
                found.push(relative.display().to_string());
            }
        }
    }
    found
}

/// Whether `word` stands in `text` as a whole identifier.
fn has_word(text: &str, word: &str) -> bool {
    let is_ident = |character: char| character.is_alphanumeric() || character == '_';
    text.match_indices(word).any(|(start, _)| {
        let before = text[..start].chars().next_back();
        let after = text[start + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// The code of every Rust, proto, SQL and template file, comment lines left
/// out, and every path of the repository.
fn code_and_paths() -> (String, Vec<String>) {
    let files = repository_files();
    let mut code = String::new();
    for file in &files {
        let known = [".rs", ".proto", ".sql", ".html", ".toml", ".yaml"];
        if known.iter().any(|ending| file.ends_with(ending)) && !file.contains("generated/") {
            let text = std::fs::read_to_string(workspace().join(file)).unwrap_or_default();
            for line in text.lines().filter(|line| !line.trim_start().starts_with("//")) {
                code.push_str(line);
                code.push('\n');
            }
        }
    }
    (code, files)
}

#[test]
fn every_name_architecture_md_gives_in_backticks_exists() {
    let map = std::fs::read_to_string(workspace().join("ARCHITECTURE.md")).unwrap();
    let (code, files) = code_and_paths();
    let exists = |path: &str| {
        let path = path.trim_end_matches('/');
        files.iter().any(|file| {
            file == path
                || file.ends_with(&format!("/{path}"))
                || file.starts_with(&format!("{path}/"))
                || file.contains(&format!("/{path}/"))
        })
    };
    let is_identifier = |text: &str| {
        !text.is_empty()
            && text.chars().all(|character| character.is_alphanumeric() || character == '_')
    };
    let mut missing = Vec::new();
    // Every other piece between backticks is a name.
    for name in map.split('`').skip(1).step_by(2) {
        // A call names its item: `run(…)` is `run`.
        let name = name.trim();
        let name = name.split_once('(').map_or(name, |(item, _)| item);
        let prose = name.contains(char::is_whitespace)
            || name.starts_with(['/', '-', '.'])
            || name.starts_with("HADO_")
            || name.contains([
                '=', '<', '>', '"', '\'', '?', '*', '…', '{', '}', '(', ')', '[', ']', '@', ',',
                ':',
            ]) && !name.contains("::");
        if prose || OUTSIDE_NAMES.contains(&name) {
            continue;
        }
        let found = if let Some(method) = name.strip_prefix("hado.v1.") {
            // A gRPC method, `hado.v1.Service/Method`: both in the .proto files.
            method.split('/').all(|part| has_word(&code, part))
        } else if let Some((file, item)) = name.split_once(".rs::") {
            // An item of a file, `web/events.rs::done`.
            let file = format!("{file}.rs");
            exists(&file)
                && files.iter().filter(|path| path.ends_with(&file)).any(|path| {
                    has_word(
                        &std::fs::read_to_string(workspace().join(path)).unwrap_or_default(),
                        item,
                    )
                })
        } else if name.contains("::") {
            // A path in Rust: each of its names is in the code (the first
            // may be a crate, named with dashes in the manifests).
            name.split("::").filter(|segment| !segment.is_empty()).all(|segment| {
                has_word(&code, segment)
                    || has_word(&code, &segment.replace('_', "-"))
                    || ["hado_core", "hado_proto", "hado_runtime", "tonic", "v1"].contains(&segment)
            })
        } else if name.contains('/') || name.contains(".rs") || name.ends_with(".md") {
            exists(name.split("::").next().unwrap_or(name))
        } else if is_identifier(name) {
            has_word(&code, name) || exists(name) || exists(&format!("{name}.rs"))
        } else {
            continue;
        };
        if !found {
            missing.push(name.to_owned());
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what the code does not have (fix the map, or add an outside \
         name to OUTSIDE_NAMES):\n{}",
        missing.join("\n")
    );
}

/// The `HADO_*` names in `text` that stand as a whole name after one of
/// `before` (a quote, `$`, `{`), trailing underscores (a prefix) left out.
fn variables(text: &str, before: &[char]) -> std::collections::BTreeSet<String> {
    let mut found = std::collections::BTreeSet::new();
    for (start, _) in text.match_indices("HADO_") {
        let preceding = text[..start].chars().next_back();
        if !preceding.is_some_and(|character| before.contains(&character)) {
            continue;
        }
        let name: String = text[start..]
            .chars()
            .take_while(|character| {
                character.is_ascii_uppercase() || character.is_ascii_digit() || *character == '_'
            })
            .collect();
        // A name that ends in `_` is a prefix (`HADO_BASIC_AUTH_`), not a variable.
        if name.len() > "HADO_".len() && !name.ends_with('_') {
            found.insert(name);
        }
    }
    found
}

#[test]
fn every_hado_variable_the_code_reads_is_in_the_docs_and_no_other() {
    let mut read = std::collections::BTreeSet::new();
    for file in repository_files() {
        let text = std::fs::read_to_string(workspace().join(&file)).unwrap_or_default();
        let code: String = text
            .lines()
            .filter(|line| {
                let line = line.trim_start();
                !line.starts_with("//") && !line.starts_with('#')
            })
            .collect::<Vec<_>>()
            .join("\n");
        if file.ends_with(".rs") {
            // Read as a string: `read(lookup, "HADO_…")`, `env = "HADO_…"`.
            read.extend(variables(&code, &['"']));
        } else if file == "Caddyfile"
            || file.ends_with("compose.yaml")
            || file.starts_with("deploy/")
            || file.starts_with("scripts/")
            || file == ".ci/run"
        {
            // `{$HADO_…}`, `${HADO_…}`, `$HADO_…`, `"HADO_…"`, `HADO_…=`.
            read.extend(variables(&code, &['$', '{', '"', '\'', ' ', '\n']));
        }
    }
    // The README and the guides under docs/: wherever a reader looks it up.
    let mut docs = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    for entry in std::fs::read_dir(workspace().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|extension| extension == "md") {
            docs.push('\n');
            docs.push_str(&std::fs::read_to_string(path).unwrap());
        }
    }
    let documented = variables(&docs, &['`', ' ', '(', '\n', '|']);
    let undocumented: Vec<_> = read.difference(&documented).cloned().collect();
    let unread: Vec<_> = documented.difference(&read).cloned().collect();
    assert!(
        undocumented.is_empty() && unread.is_empty(),
        "read but not in README.md or docs/: {undocumented:?}\nin the docs but read nowhere: {unread:?}"
    );
}

/// What the rules about a file's Rust see of it: each production function
/// (a `fn` or a method outside `#[cfg(test)]` and `#[test]`) with its
/// lines, and each glob import of the crate's own modules outside test
/// modules. Read with `syn`, so that a string or a comment that looks like
/// code is not taken for it.
#[derive(Default)]
struct Shape {
    /// `path` of the function within its file, and the lines from its
    /// signature to its closing brace.
    functions: Vec<(String, usize, usize)>,
    /// The line of each `use super::*`, `use self::*` or `use crate::*`.
    globs: Vec<usize>,
    /// The impl or module the visitor is in, for a function's name.
    within: Vec<String>,
}

fn is_test_only(attributes: &[syn::Attribute]) -> bool {
    attributes.iter().any(|attribute| {
        let path = attribute.path();
        path.is_ident("test")
            || path.segments.last().is_some_and(|segment| segment.ident == "test")
                && path.segments.len() == 2
            || path.is_ident("cfg")
                && attribute
                    .parse_args::<syn::Meta>()
                    .is_ok_and(|meta| meta.path().is_ident("test"))
    })
}

impl Shape {
    fn of(text: &str) -> Self {
        let file = syn::parse_file(text).expect("every source file parses");
        let mut shape = Self::default();
        syn::visit::visit_file(&mut shape, &file);
        shape
    }

    fn function(&mut self, name: &syn::Ident, spanned: proc_macro2::Span, body: &syn::Block) {
        use syn::spanned::Spanned;
        let first = spanned.start().line;
        let last = body.span().end().line;
        let mut path = self.within.clone();
        path.push(name.to_string());
        self.functions.push((path.join("::"), first, last - first + 1));
    }
}

impl<'ast> syn::visit::Visit<'ast> for Shape {
    fn visit_item_mod(&mut self, module: &'ast syn::ItemMod) {
        if is_test_only(&module.attrs) {
            return;
        }
        self.within.push(module.ident.to_string());
        syn::visit::visit_item_mod(self, module);
        self.within.pop();
    }

    fn visit_item_impl(&mut self, block: &'ast syn::ItemImpl) {
        if is_test_only(&block.attrs) {
            return;
        }
        let ty = &block.self_ty;
        self.within.push(quote_type(ty));
        syn::visit::visit_item_impl(self, block);
        self.within.pop();
    }

    fn visit_item_fn(&mut self, function: &'ast syn::ItemFn) {
        if is_test_only(&function.attrs) {
            return;
        }
        use syn::spanned::Spanned;
        self.function(&function.sig.ident, function.sig.span(), &function.block);
        syn::visit::visit_item_fn(self, function);
    }

    fn visit_impl_item_fn(&mut self, function: &'ast syn::ImplItemFn) {
        if is_test_only(&function.attrs) {
            return;
        }
        use syn::spanned::Spanned;
        self.function(&function.sig.ident, function.sig.span(), &function.block);
        syn::visit::visit_impl_item_fn(self, function);
    }

    fn visit_trait_item_fn(&mut self, function: &'ast syn::TraitItemFn) {
        if let Some(body) = &function.default
            && !is_test_only(&function.attrs)
        {
            use syn::spanned::Spanned;
            self.function(&function.sig.ident, function.sig.span(), body);
        }
        syn::visit::visit_trait_item_fn(self, function);
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if is_test_only(&item.attrs) {
            return;
        }
        let mut tree = &item.tree;
        let mut first = true;
        loop {
            match tree {
                syn::UseTree::Path(path) => {
                    if first && !["super", "self", "crate"].contains(&&*path.ident.to_string()) {
                        return;
                    }
                    first = false;
                    tree = &path.tree;
                }
                syn::UseTree::Glob(glob) => {
                    if !first {
                        use syn::spanned::Spanned;
                        self.globs.push(glob.span().start().line);
                    }
                    return;
                }
                _ => return,
            }
        }
    }
}

/// A type as its last path segment (`Store` for `hado_storage::Store`).
fn quote_type(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(path) => {
            path.path.segments.last().map_or_else(String::new, |segment| segment.ident.to_string())
        }
        syn::Type::Reference(reference) => quote_type(&reference.elem),
        _ => String::from("_"),
    }
}

/// Every production source file of the workspace (its crates' `src/`, the
/// generated code aside), as its path from the root and its text.
fn production_sources() -> Vec<(String, String)> {
    let root = workspace();
    members()
        .into_iter()
        .flat_map(|krate| sources(&root.join(krate).join("src")))
        .map(|(path, text)| (path.strip_prefix(&root).unwrap().display().to_string(), text))
        .filter(|(shown, _)| !shown.starts_with("proto/src/generated"))
        .collect()
}

/// A route table: a function that is one router, most of its lines a
/// `.route(` or a `.nest(`. It is long because the service has many
/// addresses, and it reads best whole.
fn is_route_table(text: &str, first: usize, lines: usize) -> bool {
    let body: Vec<&str> = text.lines().skip(first - 1).take(lines).collect();
    let routes = body
        .iter()
        .filter(|line| {
            let line = line.trim_start();
            line.starts_with(".route(") || line.starts_with(".nest(") || line.starts_with("\"/")
        })
        .count();
    routes * 2 >= body.len()
}

#[test]
fn no_production_function_is_over_eighty_lines() {
    const MOST: usize = 80;
    let mut found = Vec::new();
    for (shown, text) in production_sources() {
        for (name, first, lines) in Shape::of(&text).functions {
            if lines > MOST && !is_route_table(&text, first, lines) {
                found.push(format!("{shown}:{first}: {name} is {lines} lines"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "over {MOST} lines (split each by what its parts do):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_module_imports_its_neighbours_by_name() {
    let mut found = Vec::new();
    for (shown, text) in production_sources() {
        for line in Shape::of(&text).globs {
            found.push(format!("{shown}:{line}"));
        }
    }
    assert!(
        found.is_empty(),
        "a glob import of the crate's own modules outside a test module hides where a name \
         comes from; name each:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_shape_reader_sees_what_it_is_shown() {
    let shape = Shape::of(
        "use super::*;\nuse std::io::*;\nfn short() {}\nimpl Store {\n    fn open() {\n        \
         let a = 1;\n    }\n}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    \
         fn long() {}\n}\n",
    );
    assert_eq!(shape.globs, [1]);
    assert_eq!(
        shape.functions,
        [("short".to_owned(), 3, 1), ("Store::open".to_owned(), 5, 3)],
        "test code is not production code"
    );
}

/// The numbers inside each `#[schemars(…)]` attribute of a file, with
/// their lines: a schema's limits, which should be named, not written.
fn schema_numbers(text: &str) -> Vec<(usize, usize)> {
    struct Numbers(Vec<(usize, usize)>);
    fn walk(tokens: proc_macro2::TokenStream, found: &mut Vec<(usize, usize)>) {
        for token in tokens {
            match token {
                proc_macro2::TokenTree::Group(group) => walk(group.stream(), found),
                proc_macro2::TokenTree::Literal(literal) => {
                    if let Ok(number) = literal.to_string().parse::<usize>() {
                        found.push((literal.span().start().line, number));
                    }
                }
                _ => {}
            }
        }
    }
    impl<'ast> syn::visit::Visit<'ast> for Numbers {
        fn visit_attribute(&mut self, attribute: &'ast syn::Attribute) {
            if attribute.path().is_ident("schemars")
                && let syn::Meta::List(list) = &attribute.meta
            {
                walk(list.tokens.clone(), &mut self.0);
            }
        }
    }
    let file = syn::parse_file(text).expect("every source file parses");
    let mut numbers = Numbers(Vec::new());
    syn::visit::visit_file(&mut numbers, &file);
    numbers.0
}

/// What a file says before its tests, with each line's number.
fn before_tests(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .take_while(|line| *line != "#[cfg(test)]")
        .enumerate()
        .map(|(at, line)| (at + 1, line))
}

#[test]
fn each_field_limit_and_description_is_said_once() {
    use hado_words::fields::ALL;
    const HOME: &str = "words/src/fields.rs";
    let root = workspace();
    let limits: std::collections::BTreeSet<usize> =
        ALL.iter().map(|field| field.max).filter(|max| *max > 1).collect();
    let mut found = Vec::new();
    let mut files = production_sources();
    for folder in ["gateway-http/templates", "proto/hado/v1"] {
        for entry in std::fs::read_dir(root.join(folder)).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            files.push((path.strip_prefix(&root).unwrap().display().to_string(), text));
        }
    }
    for (shown, text) in files.iter().filter(|(shown, _)| shown != HOME) {
        if shown.ends_with(".rs") {
            for (line, number) in schema_numbers(text) {
                if limits.contains(&number) {
                    found.push(format!("{shown}:{line}: a schema writes out the limit {number}"));
                }
            }
        }
        for (line, written) in before_tests(text) {
            // A description's limit, in a comment or in words: "at most 200
            // characters", "(1–255 characters)", "≤ 64 characters".
            for limit in &limits {
                if [" characters", "-character", " символов"]
                    .iter()
                    .any(|unit| written.contains(&format!("{limit}{unit}")))
                {
                    found.push(format!(
                        "{shown}:{line}: a description writes out the limit {limit}"
                    ));
                }
            }
            // A form's input for a field, with its limit written out.
            if shown.ends_with(".html")
                && let Some((_, after)) = written.split_once("maxlength=\"")
                && after.starts_with(|character: char| character.is_ascii_digit())
                && ALL.iter().any(|field| written.contains(&format!("name=\"{}\"", field.name)))
            {
                found.push(format!("{shown}:{line}: a form writes out a field's maxlength"));
            }
        }
        // A field's meaning, or the opening of it, written out again.
        let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for field in ALL {
            let opening: String = field.meaning.chars().take(40).collect();
            if flat.contains(&opening) {
                found.push(format!("{shown}: says again what {} means", field.name));
            }
        }
    }
    assert!(
        found.is_empty(),
        "an event field's limit or description is said in {HOME}; take it from there:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_schema_reader_finds_a_limit_written_in_an_attribute() {
    let numbers = schema_numbers(
        "struct A {\n    #[schemars(length(min = 1, max = 200))]\n    a: String,\n    \
         #[schemars(length(max = TITLE.max))]\n    b: String,\n}\n",
    );
    assert_eq!(numbers, [(2, 1), (2, 200)]);
}

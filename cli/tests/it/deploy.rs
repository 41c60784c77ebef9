//! The deployment files hold together: compose.yaml parses (with PyYAML;
//! no Docker engine is needed) and runs the services the operators' guide names, only
//! Caddy publishes ports, every setting it needs is in .env.example, Caddy
//! gets every setting the Caddyfile reads, and the Dockerfile builds in
//! stages, its first stage loads the workspace from the manifests alone,
//! and it runs as a user without baking secrets in.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

const COMPOSE: &str = include_str!("../../../compose.yaml");
const ENV_EXAMPLE: &str = include_str!("../../../.env.example");
const CADDYFILE: &str = include_str!("../../../Caddyfile");
const DOCKERFILE: &str = include_str!("../../../Dockerfile");
const OPERATORS: &str = include_str!("../../../docs/operators.md");

/// compose.yaml as JSON, through PyYAML (merge keys and all); `None`
/// (said on stderr, and a failure under CI) when python3 or PyYAML is not
/// here.
fn compose(test: &str) -> Option<Value> {
    let here = hado_testing::runs("python3", &["-c", "import yaml"]);
    if !hado_testing::tool_available(test, here, "python3 with PyYAML (pip install pyyaml)") {
        return None;
    }
    let script = "import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    // A python3 that stopped early closes its input: what it said tells why.
    let _ = child.stdin.take().unwrap().write_all(COMPOSE.as_bytes());
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "compose.yaml does not parse:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(serde_json::from_slice(&output.stdout).unwrap())
}

/// The names inside `${…}` (compose) or `{$…}` (Caddyfile) placeholders, and
/// whether each has a default.
fn placeholders(text: &str, open: &str) -> Vec<(String, bool)> {
    text.split(open)
        .skip(1)
        .map(|rest| {
            let inside = rest.split('}').next().unwrap_or_default();
            let name: String =
                inside.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            (name, inside.contains(":-") || (open == "{$" && inside.contains(':')))
        })
        .collect()
}

#[test]
fn compose_runs_the_documented_services_with_documented_settings() {
    let Some(compose) =
        compose("deploy::compose_runs_the_documented_services_with_documented_settings")
    else {
        return;
    };
    let services = compose["services"].as_object().unwrap();
    let names: BTreeSet<&str> = services.keys().map(String::as_str).collect();
    assert_eq!(names, BTreeSet::from(["caddy", "core", "gateway-http", "gateway-mcp", "postgres"]));
    for name in &names {
        assert!(
            OPERATORS.contains(&format!("`{name}`")),
            "the operators' guide names the {name} service"
        );
    }
    for (name, service) in services {
        assert_eq!(
            service.get("ports").is_some(),
            name == "caddy",
            "only Caddy publishes ports ({name})"
        );
    }
    let postgres = &services["postgres"];
    assert!(postgres["healthcheck"]["test"].is_array());
    assert!(postgres["volumes"][0].as_str().unwrap().starts_with("postgres-data:"));
    assert!(compose["volumes"].get("postgres-data").is_some(), "a named volume");
    assert_eq!(services["core"]["depends_on"]["postgres"]["condition"], "service_healthy");
    for gateway in ["gateway-http", "gateway-mcp"] {
        assert_eq!(services[gateway]["environment"]["HADO_CORE_URL"], "http://core:50051");
    }
    assert_eq!(
        services["gateway-http"]["environment"]["HADO_TRUSTED_PROXIES"],
        services["caddy"]["networks"]["default"]["ipv4_address"],
        "only Caddy names users"
    );

    // Caddy's fixed address lies in the subnet and outside the range every
    // other container's address comes from, so none can take it first.
    let ipam = &compose["networks"]["default"]["ipam"]["config"][0];
    let default_of = |value: &Value| {
        let text = value.as_str().unwrap_or_default();
        text.split(":-").nth(1).map_or(text, |rest| rest.trim_end_matches('}')).to_owned()
    };
    let caddy = default_of(&services["caddy"]["networks"]["default"]["ipv4_address"]);
    let (subnet, range) = (default_of(&ipam["subnet"]), default_of(&ipam["ip_range"]));
    assert!(in_block(&caddy, &subnet), "Caddy's {caddy} is in the subnet {subnet}");
    assert!(!range.is_empty() && in_block(&range_start(&range), &subnet), "{range} in {subnet}");
    assert!(!in_block(&caddy, &range), "Caddy's {caddy} is outside the dynamic range {range}");

    // Every setting compose.yaml needs without a default is in .env.example.
    let documented: BTreeSet<&str> = ENV_EXAMPLE
        .lines()
        .filter_map(|line| line.trim_start_matches("# ").split_once('='))
        .map(|(name, _)| name.trim())
        .collect();
    for (name, has_default) in placeholders(COMPOSE, "${") {
        assert!(
            has_default || documented.contains(name.as_str()),
            "{name} is used by compose.yaml but not in .env.example"
        );
    }
    // Caddy gets every setting the Caddyfile reads, but those of its commented variant and its admin address.
    let caddy = services["caddy"]["environment"].as_object().unwrap();
    for (name, _) in placeholders(CADDYFILE, "{$") {
        let optional = name.starts_with("HADO_BASIC_AUTH_") || name == "HADO_CADDY_ADMIN";
        assert!(
            optional || caddy.contains_key(&name),
            "the Caddyfile reads {name}, which compose.yaml does not give Caddy"
        );
    }
}

/// Whether the IPv4 `address` lies in the block `cidr` (`172.28.0.0/24`).
fn in_block(address: &str, cidr: &str) -> bool {
    let Some((base, bits)) = cidr.split_once('/') else { return false };
    let (Ok(address), Ok(base), Ok(bits)) = (
        address.parse::<std::net::Ipv4Addr>(),
        base.parse::<std::net::Ipv4Addr>(),
        bits.parse::<u32>(),
    ) else {
        return false;
    };
    let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
    u32::from(address) & mask == u32::from(base) & mask
}

/// The first address of a block.
fn range_start(cidr: &str) -> String {
    cidr.split('/').next().unwrap_or_default().to_owned()
}

#[test]
fn the_image_builds_in_stages_and_runs_unprivileged_without_secrets() {
    assert!(
        DOCKERFILE.contains("AS build") && DOCKERFILE.contains("COPY --from=build"),
        "a multi-stage build"
    );
    assert!(
        DOCKERFILE.contains("cargo build --release --locked -p hado\n"),
        "a dependency layer built from the manifests first"
    );
    assert!(DOCKERFILE.lines().any(|line| line.trim() == "USER hado"), "runs as a user, not root");
    for line in
        DOCKERFILE.lines().filter(|line| line.starts_with("ENV ") || line.starts_with("ARG "))
    {
        assert!(
            !["TOKEN", "SECRET", "PASSWORD"].iter().any(|word| line.contains(word)),
            "no secret in the image: {line}"
        );
    }
    let ignored = include_str!("../../../.dockerignore");
    assert!(
        ignored.lines().any(|line| line == ".env")
            && ignored.lines().any(|line| line == "hado-data"),
        "secrets stay out of the build context"
    );
}

/// Copies `source` (a file, or a folder's contents) to `destination` the way
/// a Dockerfile's `COPY` does: into it when it names a folder (ends in `/`).
fn copy_as_docker_does(source: &Path, destination: &Path, into_folder: bool) {
    if source.is_dir() {
        std::fs::create_dir_all(destination).unwrap();
        for entry in std::fs::read_dir(source).unwrap() {
            let entry = entry.unwrap().path();
            copy_as_docker_does(&entry, &destination.join(entry.file_name().unwrap()), false);
        }
    } else if into_folder {
        std::fs::create_dir_all(destination).unwrap();
        std::fs::copy(source, destination.join(source.file_name().unwrap())).unwrap();
    } else {
        std::fs::create_dir_all(destination.parent().unwrap()).unwrap();
        std::fs::copy(source, destination).unwrap();
    }
}

/// The image's first stage builds the dependencies from the manifests and
/// stand-in sources alone. Replayed here (its `COPY` lines, then its `RUN`
/// with the build swapped for `cargo fetch`, which reads every manifest and
/// finds every target as the build does, without compiling), it must load:
/// a binary or benchmark added without its stand-in fails the image's build
/// at its first step.
#[test]
fn the_image_s_dependency_layer_loads_from_the_manifests_alone() {
    const BUILD: &str = "cargo build --release --locked -p hado";
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let logical = DOCKERFILE.replace("\\\n", " ");
    let stage = logical
        .lines()
        .skip_while(|line| !line.contains(" AS build"))
        .take_while(|line| line.trim() != "COPY . .");
    let mut replayed = false;
    for line in stage {
        if let Some(arguments) = line.strip_prefix("COPY ") {
            let parts: Vec<&str> = arguments.split_whitespace().collect();
            let (sources, destination) = parts.split_at(parts.len() - 1);
            for source in sources {
                copy_as_docker_does(
                    &workspace.join(source),
                    &folder.path().join(destination[0]),
                    destination[0].ends_with('/'),
                );
            }
        } else if let Some(script) = line.strip_prefix("RUN ") {
            assert!(script.contains(BUILD), "the first stage builds the dependencies: {script}");
            let script =
                script.replace(BUILD, "\"$CARGO\" fetch --locked --offline --target host-tuple");
            let output = Command::new("sh")
                .args(["-c", &script])
                .current_dir(folder.path())
                .env("CARGO", env!("CARGO"))
                .output()
                .unwrap();
            let errors = String::from_utf8_lossy(&output.stderr);
            // Cargo reads every manifest before it looks for a crate, so a
            // crate this machine never downloaded (a dev-dependency of a
            // package not built here) fails only after the manifests loaded.
            let only_a_download = errors.contains("but --offline was specified")
                && !errors.contains("failed to parse manifest");
            assert!(
                output.status.success() || only_a_download,
                "the Dockerfile's dependency layer does not load:\n{errors}"
            );
            replayed = true;
        }
    }
    assert!(replayed, "the Dockerfile has a dependency layer before `COPY . .`");
}

#[test]
fn the_telegram_webhook_call_names_the_hook_and_prints_no_secret() {
    let output = Command::new(env!("CARGO_BIN_EXE_hado"))
        .args(["telegram-webhook", "https://hado.example.com/"])
        .env("HADO_TELEGRAM_BOT_TOKEN", "123456:do-not-print")
        .env("HADO_TELEGRAM_WEBHOOK_SECRET", "do-not-print-either")
        .env_remove("HADO_TELEGRAM_API_URL")
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{printed}");
    assert!(
        printed.contains(
            r#"curl -sS "https://api.telegram.org/bot$HADO_TELEGRAM_BOT_TOKEN/setWebhook""#
        ),
        "{printed}"
    );
    assert!(
        printed.contains(r#"--data-urlencode "url=https://hado.example.com/hooks/telegram""#),
        "{printed}"
    );
    assert!(!printed.contains("do-not-print"), "secrets stay in the environment");
    let refused = Command::new(env!("CARGO_BIN_EXE_hado"))
        .args(["telegram-webhook", "hado.example.com"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
}

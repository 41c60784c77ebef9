//! The Kubernetes manifests (`deploy/kubernetes`), checked offline by
//! `deploy/kubernetes/check`: every overlay renders with `kubectl
//! kustomize`, validates with `kubernetes-validate --strict` against the
//! Kubernetes version the README names, passes `yamllint`, its Gateway API
//! objects pass the Gateway API's schemas and its CloudNativePG objects
//! Hado's own schema of the fields it uses, and Hado's policy holds over
//! what renders (non-root, read-only, resources, probes, no `latest`, no
//! secret values, every Caddyfile path routed alike). Each tool missing is
//! a skip that says so, and a failure under CI.

use std::path::Path;
use std::process::Command;

use hado_testing::{runs, tool_available};

#[test]
fn every_overlay_renders_validates_and_keeps_the_policy() {
    const TEST: &str = "the Kubernetes manifests' check";
    let models = std::env::var("HADO_K8S_MODELS").unwrap_or_default();
    let tools = [
        (
            runs("kubectl", &["kustomize", "--help"]),
            "kubectl with kustomize (apt-get install kubectl)",
        ),
        (runs("kubernetes-validate", &["--version"]), "pip install 'kubernetes-validate>=1.32'"),
        (runs("yamllint", &["--version"]), "pip install yamllint"),
        (runs("python3", &["-c", "import jsonschema, yaml"]), "pip install jsonschema pyyaml"),
        (
            runs("node", &["--version"])
                && Path::new(&models).join("node_modules/@kubernetes-models/gateway-api").is_dir(),
            "npm install @kubernetes-models/gateway-api@2.0.0, with HADO_K8S_MODELS naming the folder",
        ),
    ];
    for (found, install) in tools {
        if !tool_available(TEST, found, install) {
            return;
        }
    }
    let check = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/kubernetes/check");
    let output = Command::new(&check).output().expect("deploy/kubernetes/check runs");
    let printed = String::from_utf8_lossy(&output.stdout);
    eprintln!("{printed}{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "deploy/kubernetes/check found problems:\n{printed}");
    assert!(printed.contains("kubernetes check: postgres-external: ok"), "{printed}");
    assert!(printed.contains("kubernetes check: cloudnative-pg: ok"), "{printed}");
}

/// The example sign-in names a person by what identifies one: the email
/// address the provider verified, never `preferred_username`, which
/// OpenID Connect says is neither unique nor stable.
#[test]
fn the_example_sign_in_names_a_person_by_a_verified_email() {
    let config =
        include_str!("../../../deploy/kubernetes/components/oauth2-proxy/alpha-config.yaml");
    let deployment =
        include_str!("../../../deploy/kubernetes/components/oauth2-proxy/sign-in.yaml");
    let claims: Vec<&str> = config
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- claim:"))
        .map(str::trim)
        .collect();
    assert_eq!(claims, ["email", "email"], "X-Remote-User on the request and on the answer");
    assert!(config.contains("insecureAllowUnverifiedEmail: false"), "unverified emails refused");
    assert!(
        !config
            .lines()
            .any(|line| !line.trim_start().starts_with('#') && line.contains("preferred_username"))
    );
    assert!(!deployment.contains("allow-unverified-email"));
}

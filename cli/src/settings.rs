//! Owns where the CLI finds things: the data folder, the secrets `hado up`
//! generates into it once, and core's address. The environment wins over
//! the files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use rand::RngCore;

/// The secrets `hado up` generates, in the order they are written.
pub(crate) const SECRET_VARIABLES: [&str; 3] = ["HADO_ADMIN_TOKEN", "HADO_GATEWAY_TOKEN", "HADO_SECRET"];

pub(crate) struct Settings {
    pub data_dir: PathBuf,
    core_url: Option<String>,
}

impl Settings {
    pub(crate) fn new(data_dir: PathBuf, core_url: Option<String>) -> Self {
        Self { data_dir, core_url }
    }

    pub(crate) fn secrets_path(&self) -> PathBuf {
        self.data_dir.join("secrets.env")
    }

    pub(crate) fn grpc_addr(&self) -> String {
        std::env::var("HADO_GRPC_ADDR").ok().filter(|addr| !addr.is_empty()).unwrap_or_else(|| hado_core::config::DEFAULT_GRPC_ADDR.into())
    }

    pub(crate) fn mcp_addr(&self) -> String {
        std::env::var("HADO_MCP_ADDR").ok().filter(|addr| !addr.is_empty()).unwrap_or_else(|| hado_gateway_mcp::config::DEFAULT_MCP_ADDR.into())
    }

    pub(crate) fn http_addr(&self) -> String {
        std::env::var("HADO_HTTP_ADDR").ok().filter(|addr| !addr.is_empty()).unwrap_or_else(|| hado_gateway_http::config::DEFAULT_HTTP_ADDR.into())
    }

    /// Who the web inbox of `hado up` serves: `HADO_LOCAL_USER`, else `me`.
    pub(crate) fn local_user(&self) -> String {
        std::env::var("HADO_LOCAL_USER").ok().map(|login| login.trim().to_owned()).filter(|login| !login.is_empty()).unwrap_or_else(|| "me".into())
    }

    pub(crate) fn core_url(&self) -> String {
        self.core_url.clone().unwrap_or_else(|| format!("http://{}", self.grpc_addr()))
    }

    pub(crate) fn database_url(&self) -> String {
        std::env::var("HADO_DATABASE_URL").ok().filter(|url| !url.is_empty()).unwrap_or_else(|| format!("sqlite://{}/hado.db", self.data_dir.display()))
    }

    /// The database URL without its password, for messages.
    pub(crate) fn database_display(&self) -> String {
        let url = self.database_url();
        match url.split_once("://").and_then(|(scheme, rest)| rest.split_once('@').map(|(credentials, host)| (scheme, credentials, host))) {
            Some((scheme, credentials, host)) => format!("{scheme}://{}@{host}", credentials.split(':').next().unwrap_or_default()),
            None => url,
        }
    }

    /// A secret from the environment, else from the data folder.
    pub(crate) fn secret(&self, variable: &str) -> anyhow::Result<String> {
        if let Ok(value) = std::env::var(variable)
            && !value.trim().is_empty()
        {
            return Ok(value.trim().to_owned());
        }
        let path = self.secrets_path();
        let secrets = read_secrets(&path)
            .with_context(|| format!("{variable} is not set and {} cannot be read; run `hado up` once in this folder, or set {variable}", path.display()))?;
        match secrets.get(variable) {
            Some(value) => Ok(value.clone()),
            None => bail!("{variable} is not set and {} does not hold it", path.display()),
        }
    }

    /// Reads the data folder's secrets, generating any that are missing (once,
    /// readable by the owner only).
    pub(crate) fn ensure_secrets(&self) -> anyhow::Result<BTreeMap<String, String>> {
        make_private_folder(&self.data_dir)?;
        let path = self.secrets_path();
        let mut secrets = if path.exists() { read_secrets(&path)? } else { BTreeMap::new() };
        let missing: Vec<&str> = SECRET_VARIABLES.into_iter().filter(|variable| !secrets.contains_key(*variable)).collect();
        if !missing.is_empty() {
            for variable in missing {
                secrets.insert(variable.to_owned(), random_secret());
            }
            write_secrets(&path, &secrets)?;
        }
        Ok(secrets)
    }
}

fn random_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

fn read_secrets(path: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split_once('='))
        .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()))
        .collect())
}

fn write_secrets(path: &Path, secrets: &BTreeMap<String, String>) -> anyhow::Result<()> {
    let mut text = String::from("# Generated once by `hado up`. Keep this file private; the environment overrides it.\n");
    for variable in SECRET_VARIABLES {
        if let Some(value) = secrets.get(variable) {
            text.push_str(&format!("{variable}={value}\n"));
        }
    }
    let temporary = path.with_extension("env.tmp");
    // Private from its first byte, not made so after it was written.
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options.open(&temporary).and_then(|mut file| std::io::Write::write_all(&mut file, text.as_bytes()));
    written.with_context(|| format!("cannot write {}", temporary.display()))?;
    std::fs::rename(&temporary, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Creates `hado up`'s data folder readable by its owner only, and makes an
/// existing one so: it holds the secrets and the database, whose channels
/// hold each webhook's signing secret.
fn make_private_folder(folder: &Path) -> anyhow::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        builder.mode(0o700);
        builder.create(folder).with_context(|| format!("cannot create {}", folder.display()))?;
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700)).with_context(|| format!("cannot make {} private", folder.display()))?;
    }
    #[cfg(not(unix))]
    builder.create(folder).with_context(|| format!("cannot create {}", folder.display()))?;
    Ok(())
}

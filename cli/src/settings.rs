//! Owns where the CLI finds things: the data folder, the secrets `hado up`
//! generates into it once, and core's address. The environment wins over
//! the files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use rand::RngCore;

/// The secrets `hado up` generates, in the order they are written.
pub(crate) const SECRET_VARIABLES: [&str; 3] =
    ["HADO_ADMIN_TOKEN", "HADO_GATEWAY_TOKEN", "HADO_SECRET"];

pub(crate) struct Settings {
    pub data_dir: PathBuf,
    core_url: Option<String>,
    /// Where `hado up` was told to listen (its flags, or their variables).
    listen: Addresses,
}

/// The three addresses `hado up` listens on, where given.
#[derive(Clone, Debug, Default)]
pub(crate) struct Addresses {
    pub grpc: Option<String>,
    pub http: Option<String>,
    pub mcp: Option<String>,
}

/// The file in the data folder where `hado up` says where it listens, for
/// the admin commands run from the same folder.
const LISTENING_FILE: &str = "listening.env";

impl Settings {
    pub(crate) fn new(data_dir: PathBuf, core_url: Option<String>) -> Self {
        Self { data_dir, core_url, listen: Addresses::default() }
    }

    /// The addresses `hado up` listens on (each flag wins over its variable).
    pub(crate) fn listen_on(&mut self, addresses: Addresses) {
        self.listen = addresses;
    }

    pub(crate) fn secrets_path(&self) -> PathBuf {
        self.data_dir.join("secrets.env")
    }

    pub(crate) fn listening_path(&self) -> PathBuf {
        self.data_dir.join(LISTENING_FILE)
    }

    pub(crate) fn grpc_addr(&self) -> String {
        given(&self.listen.grpc, "HADO_GRPC_ADDR")
            .unwrap_or_else(|| hado_core::config::DEFAULT_GRPC_ADDR.into())
    }

    pub(crate) fn mcp_addr(&self) -> String {
        given(&self.listen.mcp, "HADO_MCP_ADDR")
            .unwrap_or_else(|| hado_gateway_mcp::config::DEFAULT_MCP_ADDR.into())
    }

    pub(crate) fn http_addr(&self) -> String {
        given(&self.listen.http, "HADO_HTTP_ADDR")
            .unwrap_or_else(|| hado_gateway_http::config::DEFAULT_HTTP_ADDR.into())
    }

    /// Records where `hado up` listens, for the admin commands; private to
    /// its owner like the rest of the folder.
    pub(crate) fn record_listening(
        &self,
        core_url: &str,
        http_addr: &str,
        mcp_addr: &str,
    ) -> anyhow::Result<()> {
        let text = format!(
            "# Where `hado up` listens, while it runs; the admin commands read it.\nHADO_CORE_URL={core_url}\nHADO_HTTP_ADDR={http_addr}\nHADO_MCP_ADDR={mcp_addr}\n"
        );
        write_private(&self.listening_path(), &text)
    }

    /// Forgets where `hado up` listened, once it has stopped.
    pub(crate) fn forget_listening(&self) {
        let _ = std::fs::remove_file(self.listening_path());
    }

    /// Who the web inbox of `hado up` serves: `HADO_LOCAL_USER`, else `me`.
    pub(crate) fn local_user(&self) -> String {
        std::env::var("HADO_LOCAL_USER")
            .ok()
            .map(|login| login.trim().to_owned())
            .filter(|login| !login.is_empty())
            .unwrap_or_else(|| "me".into())
    }

    /// Core's address for the admin commands: `--core-url` (or
    /// `HADO_CORE_URL`), else `HADO_GRPC_ADDR`, else where the `hado up`
    /// running in this data folder recorded it listens, else the default.
    pub(crate) fn core_url(&self) -> String {
        if let Some(url) = &self.core_url {
            return url.clone();
        }
        if let Some(addr) = given(&self.listen.grpc, "HADO_GRPC_ADDR") {
            return format!("http://{addr}");
        }
        let recorded = read_secrets(&self.listening_path())
            .ok()
            .and_then(|listening| listening.get("HADO_CORE_URL").cloned());
        recorded.unwrap_or_else(|| format!("http://{}", hado_core::config::DEFAULT_GRPC_ADDR))
    }

    pub(crate) fn database_url(&self) -> String {
        std::env::var("HADO_DATABASE_URL")
            .ok()
            .filter(|url| !url.is_empty())
            .unwrap_or_else(|| format!("sqlite://{}/hado.db", self.data_dir.display()))
    }

    /// The database URL without its password, for messages.
    pub(crate) fn database_display(&self) -> String {
        let url = self.database_url();
        match url.split_once("://").and_then(|(scheme, rest)| {
            rest.split_once('@').map(|(credentials, host)| (scheme, credentials, host))
        }) {
            Some((scheme, credentials, host)) => {
                format!("{scheme}://{}@{host}", credentials.split(':').next().unwrap_or_default())
            }
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
        let missing: Vec<&str> = SECRET_VARIABLES
            .into_iter()
            .filter(|variable| !secrets.contains_key(*variable))
            .collect();
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
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split_once('='))
        .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()))
        .collect())
}

fn write_secrets(path: &Path, secrets: &BTreeMap<String, String>) -> anyhow::Result<()> {
    let mut text = String::from(
        "# Generated once by `hado up`. Keep this file private; the environment overrides it.\n",
    );
    for variable in SECRET_VARIABLES {
        if let Some(value) = secrets.get(variable) {
            text.push_str(&format!("{variable}={value}\n"));
        }
    }
    write_private(path, &text)
}

/// Writes `text` to `path` through a temporary file, readable by its owner
/// only from its first byte.
fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
    let temporary = path.with_extension("env.tmp");
    // Private from its first byte, not made so after it was written.
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options
        .open(&temporary)
        .and_then(|mut file| std::io::Write::write_all(&mut file, text.as_bytes()));
    written.with_context(|| format!("cannot write {}", temporary.display()))?;
    std::fs::rename(&temporary, path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// A setting given as a flag, else its variable; blank counts as unset.
fn given(flag: &Option<String>, variable: &str) -> Option<String> {
    flag.clone()
        .or_else(|| std::env::var(variable).ok())
        .map(|addr| addr.trim().to_owned())
        .filter(|addr| !addr.is_empty())
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
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("cannot make {} private", folder.display()))?;
    }
    #[cfg(not(unix))]
    builder.create(folder).with_context(|| format!("cannot create {}", folder.display()))?;
    Ok(())
}

//! Owns core's configuration, read from `HADO_*` environment variables. A
//! missing or malformed setting stops core at start with one line naming it.

use std::net::SocketAddr;

use chrono_tz::Tz;

#[derive(Clone)]
pub struct CoreConfig {
    pub database_url: String,
    pub grpc_addr: SocketAddr,
    pub admin_token: String,
    pub gateway_token: String,
    /// Signs action links (`HADO_SECRET`).
    pub secret: String,
    pub default_zone: Tz,
}

impl std::fmt::Debug for CoreConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("CoreConfig")
            .field("grpc_addr", &self.grpc_addr)
            .field("default_zone", &self.default_zone)
            .finish_non_exhaustive()
    }
}

pub use hado_proto::process::{ConfigError, socket_addr};
use hado_proto::process::{Lookup, read, secret};

pub const DEFAULT_DATABASE_URL: &str = "sqlite://hado-data/hado.db";
pub const DEFAULT_GRPC_ADDR: &str = "127.0.0.1:50051";

impl CoreConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&hado_proto::process::environment)
    }

    pub fn from_lookup(lookup: Lookup<'_>) -> Result<Self, ConfigError> {
        let database_url = read(lookup, "HADO_DATABASE_URL").unwrap_or_else(|| DEFAULT_DATABASE_URL.to_owned());
        crate::storage::Backend::from_url(&database_url)
            .map_err(|error| ConfigError { variable: "HADO_DATABASE_URL", problem: error.to_string() })?;
        let zone_name = read(lookup, "HADO_DEFAULT_TZ").unwrap_or_else(|| "UTC".to_owned());
        let default_zone = zone_name.parse().map_err(|_| ConfigError {
            variable: "HADO_DEFAULT_TZ",
            problem: format!("{zone_name:?} is not an IANA time zone name such as Europe/Berlin"),
        })?;
        Ok(Self {
            database_url,
            grpc_addr: socket_addr(lookup, "HADO_GRPC_ADDR", DEFAULT_GRPC_ADDR)?,
            admin_token: secret(lookup, "HADO_ADMIN_TOKEN")?,
            gateway_token: secret(lookup, "HADO_GATEWAY_TOKEN")?,
            secret: secret(lookup, "HADO_SECRET")?,
            default_zone,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Result<CoreConfig, ConfigError> {
        let owned: Vec<(String, String)> = pairs.iter().map(|(key, value)| (key.to_string(), value.to_string())).collect();
        CoreConfig::from_lookup(&move |variable| owned.iter().find(|(key, _)| key == variable).map(|(_, value)| value.clone()))
    }

    const SECRET: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn defaults_work_once_the_secrets_are_set() {
        let config = config(&[("HADO_ADMIN_TOKEN", SECRET), ("HADO_GATEWAY_TOKEN", SECRET), ("HADO_SECRET", SECRET)]).unwrap();
        assert_eq!(config.database_url, DEFAULT_DATABASE_URL);
        assert_eq!(config.grpc_addr.to_string(), DEFAULT_GRPC_ADDR);
        assert_eq!(config.default_zone, chrono_tz::UTC);
    }

    #[test]
    fn each_bad_setting_is_named() {
        let error = config(&[("HADO_GATEWAY_TOKEN", SECRET), ("HADO_SECRET", SECRET)]).unwrap_err();
        assert_eq!(error.variable, "HADO_ADMIN_TOKEN");
        let error = config(&[("HADO_ADMIN_TOKEN", "short"), ("HADO_GATEWAY_TOKEN", SECRET), ("HADO_SECRET", SECRET)]).unwrap_err();
        assert_eq!(error.to_string(), "HADO_ADMIN_TOKEN: is 5 characters long; use at least 32");
        let base = [("HADO_ADMIN_TOKEN", SECRET), ("HADO_GATEWAY_TOKEN", SECRET), ("HADO_SECRET", SECRET)];
        let with = |pair: (&'static str, &'static str)| {
            let mut pairs = base.to_vec();
            pairs.push(pair);
            config(&pairs).unwrap_err()
        };
        assert_eq!(with(("HADO_DATABASE_URL", "mysql://x")).variable, "HADO_DATABASE_URL");
        assert_eq!(with(("HADO_GRPC_ADDR", "localhost")).variable, "HADO_GRPC_ADDR");
        assert_eq!(with(("HADO_DEFAULT_TZ", "Mars/Base")).variable, "HADO_DEFAULT_TZ");
    }
}

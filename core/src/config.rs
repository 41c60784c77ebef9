//! Owns core's configuration, read from `HADO_*` environment variables. A
//! missing or malformed setting stops core at start with one line naming it.

use std::net::SocketAddr;

use chrono_tz::Tz;

use crate::domain::profile::Locale;

#[derive(Clone)]
pub struct CoreConfig {
    pub database_url: String,
    pub grpc_addr: SocketAddr,
    pub admin_token: String,
    pub gateway_token: String,
    /// Signs action links (`HADO_SECRET`).
    pub secret: String,
    /// The time zone of a user seen for the first time (`HADO_DEFAULT_TZ`).
    pub default_zone: Tz,
    /// The language of a user seen for the first time (`HADO_DEFAULT_LOCALE`,
    /// `en` or `ru`); each person can change theirs in Settings.
    pub default_locale: Locale,
    /// The HTTP gateway's public address, for the action links reminders
    /// carry (`HADO_PUBLIC_URL`).
    pub public_url: String,
    /// Whether webhooks may target private and loopback addresses
    /// (`HADO_WEBHOOK_ALLOW_PRIVATE`).
    pub webhook_allow_private: bool,
    /// The Telegram bot (`HADO_TELEGRAM_BOT_TOKEN`, `HADO_TELEGRAM_API_URL`,
    /// `HADO_TELEGRAM_WEBHOOK_SECRET` for webhook mode); none without a token.
    pub telegram: Option<TelegramConfig>,
    /// Posts in flight to one receiver (a webhook's host, or Telegram)
    /// across all cores (`HADO_DELIVERY_CONCURRENCY`).
    pub delivery_concurrency: u32,
}

/// The Telegram bot's settings.
#[derive(Clone, Debug)]
pub struct TelegramConfig {
    pub token: String,
    /// Such as https://api.telegram.org (`HADO_TELEGRAM_API_URL`).
    pub api_url: String,
    /// Set in webhook mode: the gateway checks Telegram's secret header and
    /// core does not poll.
    pub webhook: bool,
}

/// Posts in flight to one receiver across all cores, unless
/// `HADO_DELIVERY_CONCURRENCY` says otherwise: what one core claims, and so
/// sends, at once.
pub const DEFAULT_DELIVERY_CONCURRENCY: u32 = 50;

impl std::fmt::Debug for CoreConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("CoreConfig")
            .field("grpc_addr", &self.grpc_addr)
            .field("default_zone", &self.default_zone)
            .finish_non_exhaustive()
    }
}

pub use hado_runtime::process::{ConfigError, socket_addr};
use hado_runtime::process::{Lookup, positive_number, read, secret};

pub(crate) const DEFAULT_DATABASE_URL: &str = "sqlite://hado-data/hado.db";
pub const DEFAULT_GRPC_ADDR: &str = "127.0.0.1:50051";

pub(crate) const DEFAULT_PUBLIC_URL: &str = "http://127.0.0.1:8080";

fn public_url(lookup: Lookup<'_>) -> Result<String, ConfigError> {
    let url = read(lookup, "HADO_PUBLIC_URL").unwrap_or_else(|| DEFAULT_PUBLIC_URL.to_owned());
    if hado_runtime::process::host_of_url(&url).is_none()
        || !(url.starts_with("http://") || url.starts_with("https://"))
    {
        return Err(ConfigError {
            variable: "HADO_PUBLIC_URL",
            problem: format!("{url:?} is not a URL such as https://hado.example.com"),
        });
    }
    Ok(url.trim_end_matches('/').to_owned())
}

fn flag(lookup: Lookup<'_>, variable: &'static str) -> Result<bool, ConfigError> {
    match read(lookup, variable).map(|value| value.to_ascii_lowercase()).as_deref() {
        None | Some("0" | "false" | "no") => Ok(false),
        Some("1" | "true" | "yes") => Ok(true),
        Some(other) => {
            Err(ConfigError { variable, problem: format!("{other:?} is not true or false") })
        }
    }
}

pub(crate) const DEFAULT_TELEGRAM_API_URL: &str = "https://api.telegram.org";

fn telegram(lookup: Lookup<'_>) -> Result<Option<TelegramConfig>, ConfigError> {
    let Some(token) = read(lookup, "HADO_TELEGRAM_BOT_TOKEN") else { return Ok(None) };
    if !token.contains(':') {
        return Err(ConfigError {
            variable: "HADO_TELEGRAM_BOT_TOKEN",
            problem: "is not a bot token such as 123456:ABC-DEF… (BotFather gives one)".into(),
        });
    }
    let api_url = read(lookup, "HADO_TELEGRAM_API_URL")
        .unwrap_or_else(|| DEFAULT_TELEGRAM_API_URL.to_owned());
    if hado_runtime::process::host_of_url(&api_url).is_none() {
        return Err(ConfigError {
            variable: "HADO_TELEGRAM_API_URL",
            problem: format!("{api_url:?} is not a URL such as {DEFAULT_TELEGRAM_API_URL}"),
        });
    }
    let webhook = read(lookup, "HADO_TELEGRAM_WEBHOOK_SECRET").is_some();
    Ok(Some(TelegramConfig { token, api_url, webhook }))
}

impl CoreConfig {
    pub(crate) fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&hado_runtime::process::environment)
    }

    pub(crate) fn from_lookup(lookup: Lookup<'_>) -> Result<Self, ConfigError> {
        let database_url =
            read(lookup, "HADO_DATABASE_URL").unwrap_or_else(|| DEFAULT_DATABASE_URL.to_owned());
        crate::storage::Backend::from_url(&database_url).map_err(|error| ConfigError {
            variable: "HADO_DATABASE_URL",
            problem: error.to_string(),
        })?;
        let zone_name = read(lookup, "HADO_DEFAULT_TZ").unwrap_or_else(|| "UTC".to_owned());
        let default_zone = zone_name.parse().map_err(|_| ConfigError {
            variable: "HADO_DEFAULT_TZ",
            problem: format!("{zone_name:?} is not an IANA time zone name such as Europe/Berlin"),
        })?;
        let locale_name = read(lookup, "HADO_DEFAULT_LOCALE").unwrap_or_else(|| "en".to_owned());
        let default_locale = Locale::from_name(&locale_name).ok_or_else(|| ConfigError {
            variable: "HADO_DEFAULT_LOCALE",
            problem: format!("{locale_name:?} is not a language Hado speaks: en or ru"),
        })?;
        Ok(Self {
            database_url,
            grpc_addr: socket_addr(lookup, "HADO_GRPC_ADDR", DEFAULT_GRPC_ADDR)?,
            admin_token: secret(lookup, "HADO_ADMIN_TOKEN")?,
            gateway_token: secret(lookup, "HADO_GATEWAY_TOKEN")?,
            secret: secret(lookup, "HADO_SECRET")?,
            public_url: public_url(lookup)?,
            webhook_allow_private: flag(lookup, "HADO_WEBHOOK_ALLOW_PRIVATE")?,
            telegram: telegram(lookup)?,
            delivery_concurrency: positive_number(
                lookup,
                "HADO_DELIVERY_CONCURRENCY",
                DEFAULT_DELIVERY_CONCURRENCY,
            )?,
            default_zone,
            default_locale,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Result<CoreConfig, ConfigError> {
        let owned: Vec<(String, String)> =
            pairs.iter().map(|(key, value)| (key.to_string(), value.to_string())).collect();
        CoreConfig::from_lookup(&move |variable| {
            owned.iter().find(|(key, _)| key == variable).map(|(_, value)| value.clone())
        })
    }

    const SECRET: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn defaults_work_once_the_secrets_are_set() {
        let config = config(&[
            ("HADO_ADMIN_TOKEN", SECRET),
            ("HADO_GATEWAY_TOKEN", SECRET),
            ("HADO_SECRET", SECRET),
        ])
        .unwrap();
        assert_eq!(config.database_url, DEFAULT_DATABASE_URL);
        assert_eq!(config.grpc_addr.to_string(), DEFAULT_GRPC_ADDR);
        assert_eq!(config.default_zone, chrono_tz::UTC);
        assert_eq!(config.default_locale, Locale::En);
    }

    #[test]
    fn the_default_language_is_en_or_ru() {
        let base =
            [("HADO_ADMIN_TOKEN", SECRET), ("HADO_GATEWAY_TOKEN", SECRET), ("HADO_SECRET", SECRET)];
        let with = |locale: &'static str| {
            let mut pairs = base.to_vec();
            pairs.push(("HADO_DEFAULT_LOCALE", locale));
            config(&pairs)
        };
        assert_eq!(with("ru").unwrap().default_locale, Locale::Ru);
        let refused = with("de").unwrap_err();
        assert_eq!(
            refused.to_string(),
            r#"HADO_DEFAULT_LOCALE: "de" is not a language Hado speaks: en or ru"#
        );
    }

    #[test]
    fn each_bad_setting_is_named() {
        let error = config(&[("HADO_GATEWAY_TOKEN", SECRET), ("HADO_SECRET", SECRET)]).unwrap_err();
        assert_eq!(error.variable, "HADO_ADMIN_TOKEN");
        let error = config(&[
            ("HADO_ADMIN_TOKEN", "short"),
            ("HADO_GATEWAY_TOKEN", SECRET),
            ("HADO_SECRET", SECRET),
        ])
        .unwrap_err();
        assert_eq!(error.to_string(), "HADO_ADMIN_TOKEN: is 5 characters long; use at least 32");
        let base =
            [("HADO_ADMIN_TOKEN", SECRET), ("HADO_GATEWAY_TOKEN", SECRET), ("HADO_SECRET", SECRET)];
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

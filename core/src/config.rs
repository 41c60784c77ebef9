//! Owns core's configuration, read from `HADO_*` environment variables. A
//! missing or malformed setting stops core at start with one line naming it.

use std::net::SocketAddr;

use chrono_tz::Tz;

use hado_domain::profile::Locale;

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
    /// The mail server reminders by email go through (`HADO_SMTP_URL`,
    /// `HADO_SMTP_FROM`); none, and no email channel, without a URL.
    pub smtp: Option<SmtpConfig>,
    /// Web Push (`HADO_VAPID_SUBJECT`, `HADO_VAPID_PRIVATE_KEY`); none, and
    /// no push channel, without a subject.
    pub push: Option<PushConfig>,
}

/// How this Hado names itself to push services (RFC 8292).
#[derive(Clone)]
pub struct PushConfig {
    /// A `mailto:` or `https:` URL a push service can reach its operator at.
    pub subject: String,
    /// The VAPID private key (base64url of the P-256 scalar) when the
    /// operator gives one; otherwise core makes one on first start and
    /// keeps it in the database.
    pub private_key: Option<String>,
}

impl std::fmt::Debug for PushConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("PushConfig")
            .field("subject", &self.subject)
            .field("private_key", &self.private_key.as_ref().map(|_| "…"))
            .finish()
    }
}

fn push(lookup: Lookup<'_>) -> Result<Option<PushConfig>, ConfigError> {
    let private_key = read(lookup, "HADO_VAPID_PRIVATE_KEY");
    let Some(subject) = read(lookup, "HADO_VAPID_SUBJECT") else {
        return match private_key {
            Some(_) => Err(ConfigError {
                variable: "HADO_VAPID_SUBJECT",
                problem: "is not set, but HADO_VAPID_PRIVATE_KEY is: set the mailto: or https: address push services may reach you at".into(),
            }),
            None => Ok(None),
        };
    };
    let reachable = url::Url::parse(&subject).ok().filter(|url| match url.scheme() {
        "mailto" => url.path().contains('@'),
        "https" => url.host_str().is_some(),
        _ => false,
    });
    if reachable.is_none() {
        return Err(ConfigError {
            variable: "HADO_VAPID_SUBJECT",
            problem: format!(
                "{subject:?} is not a mailto: or https: URL such as mailto:admin@example.com"
            ),
        });
    }
    if let Some(key) = &private_key {
        hado_engine::web_push::Vapid::new(&subject, key)
            .map_err(|problem| ConfigError { variable: "HADO_VAPID_PRIVATE_KEY", problem })?;
    }
    Ok(Some(PushConfig { subject, private_key }))
}

/// How core reaches its mail server, read once at start from
/// `HADO_SMTP_URL` and `HADO_SMTP_FROM`. The password is kept out of
/// `Debug` and out of every error.
#[derive(Clone)]
pub struct SmtpConfig {
    pub host: String,
    pub port: u16,
    pub security: SmtpSecurity,
    /// The user name and password to sign in with, if any.
    pub(crate) credentials: Option<(String, String)>,
    /// Who the mail is from: "Hado <hado@example.com>".
    pub from: lettre::message::Mailbox,
}

/// How the connection to the mail server is protected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmtpSecurity {
    /// `smtps://`: TLS from the first byte (port 465).
    Tls,
    /// `smtp://`: STARTTLS, required (port 587).
    StartTls,
    /// No TLS: to a loopback host, or with `?tls=none` in the URL.
    Plain,
}

impl std::fmt::Debug for SmtpConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SmtpConfig")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("security", &self.security)
            .field("user", &self.credentials.as_ref().map(|(user, _)| user))
            .field("from", &self.from.to_string())
            .finish_non_exhaustive()
    }
}

impl SmtpConfig {
    /// The settings `HADO_SMTP_URL` and `HADO_SMTP_FROM` would give.
    pub fn read(url: &str, from: &str) -> Result<Self, ConfigError> {
        let (url, from) = (url.to_owned(), from.to_owned());
        let lookup = move |variable: &str| match variable {
            "HADO_SMTP_URL" => Some(url.clone()),
            "HADO_SMTP_FROM" => Some(from.clone()),
            _ => None,
        };
        Ok(smtp(&lookup)?.expect("a URL was given"))
    }
}

const SMTP_EXAMPLE: &str = "smtp://user:password@mail.example.com:587";

fn smtp(lookup: Lookup<'_>) -> Result<Option<SmtpConfig>, ConfigError> {
    let from = read(lookup, "HADO_SMTP_FROM");
    let Some(written) = read(lookup, "HADO_SMTP_URL") else {
        return match from {
            Some(_) => Err(ConfigError {
                variable: "HADO_SMTP_FROM",
                problem:
                    "is set, but HADO_SMTP_URL is not: set the mail server to send through too"
                        .into(),
            }),
            None => Ok(None),
        };
    };
    let refused = |problem: String| ConfigError { variable: "HADO_SMTP_URL", problem };
    // Never echoed: the URL may hold the password.
    let url = url::Url::parse(&written)
        .map_err(|_| refused(format!("is not a URL such as {SMTP_EXAMPLE}")))?;
    let host = match url.host() {
        Some(url::Host::Ipv6(address)) => address.to_string(),
        Some(host) => host.to_string(),
        None => return Err(refused(format!("names no host: write it as {SMTP_EXAMPLE}"))),
    };
    let (security, port) = security(&url, &host, refused)?;
    let decoded = |part: &str, what: &str| {
        percent_encoding::percent_decode_str(part)
            .decode_utf8()
            .map(|text| text.into_owned())
            .map_err(|_| refused(format!("its {what} is not UTF-8 once percent-decoded")))
    };
    let credentials = match url.password() {
        Some(password) => {
            Some((decoded(url.username(), "user name")?, decoded(password, "password")?))
        }
        None if !url.username().is_empty() => {
            return Err(refused("names a user but no password: write user:password@".into()));
        }
        None => None,
    };
    let Some(from) = from else {
        return Err(ConfigError {
            variable: "HADO_SMTP_FROM",
            problem: "is not set: say who reminders come from, such as \"Hado <hado@example.com>\""
                .into(),
        });
    };
    let from = from.parse().map_err(|_| ConfigError {
        variable: "HADO_SMTP_FROM",
        problem: format!("{from:?} is not an address such as \"Hado <hado@example.com>\""),
    })?;
    let port = url.port().unwrap_or(port);
    Ok(Some(SmtpConfig { host, port, security, credentials, from }))
}

/// How mail goes to the server of `url` (plain, STARTTLS or TLS) and its
/// default port, from the scheme and the `tls=` setting: plain to a
/// loopback address unless told otherwise, encrypted anywhere else.
fn security(
    url: &url::Url,
    host: &str,
    refused: impl Fn(String) -> ConfigError,
) -> Result<(SmtpSecurity, u16), ConfigError> {
    let mut tls = None;
    for (key, value) in url.query_pairs() {
        match (key.as_ref(), value.as_ref()) {
            ("tls", "none" | "required") if tls.is_none() => tls = Some(value.into_owned()),
            ("tls", _) => {
                return Err(refused("tls= is none (plain SMTP) or required, once".into()));
            }
            (other, _) => {
                return Err(refused(format!("{other:?} is not a setting it takes; tls=none is")));
            }
        }
    }
    // smtp:// is not a scheme `url` knows, so an address comes back as a name.
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|address| address.is_loopback());
    match (url.scheme(), tls.as_deref()) {
        ("smtps", None) => Ok((SmtpSecurity::Tls, 465)),
        ("smtps", Some(_)) => {
            Err(refused("smtps:// is TLS from the start; tls= is for smtp://".into()))
        }
        ("smtp", Some("none")) => Ok((SmtpSecurity::Plain, 25)),
        ("smtp", Some(_)) => Ok((SmtpSecurity::StartTls, 587)),
        ("smtp", None) if loopback => Ok((SmtpSecurity::Plain, 25)),
        ("smtp", None) => Ok((SmtpSecurity::StartTls, 587)),
        (scheme, _) => Err(refused(format!(
            "{scheme}:// is not smtp:// (STARTTLS) or smtps:// (TLS), as in {SMTP_EXAMPLE}"
        ))),
    }
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

pub use hado_runtime::settings::{ConfigError, socket_addr};
use hado_runtime::settings::{Lookup, positive_number, read, secret};

pub(crate) const DEFAULT_DATABASE_URL: &str = "sqlite://hado-data/hado.db";
pub const DEFAULT_GRPC_ADDR: &str = "127.0.0.1:50051";

pub(crate) const DEFAULT_PUBLIC_URL: &str = "http://127.0.0.1:8080";

fn public_url(lookup: Lookup<'_>) -> Result<String, ConfigError> {
    let url = read(lookup, "HADO_PUBLIC_URL").unwrap_or_else(|| DEFAULT_PUBLIC_URL.to_owned());
    if hado_runtime::settings::host_of_url(&url).is_none()
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
    if hado_runtime::settings::host_of_url(&api_url).is_none() {
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
        Self::from_lookup(&hado_runtime::settings::environment)
    }

    pub(crate) fn from_lookup(lookup: Lookup<'_>) -> Result<Self, ConfigError> {
        let database_url =
            read(lookup, "HADO_DATABASE_URL").unwrap_or_else(|| DEFAULT_DATABASE_URL.to_owned());
        hado_storage::Backend::from_url(&database_url).map_err(|error| ConfigError {
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
            smtp: smtp(lookup)?,
            push: push(lookup)?,
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
    fn push_is_on_with_a_reachable_subject_and_a_key_that_is_a_p256_scalar() {
        let base =
            [("HADO_ADMIN_TOKEN", SECRET), ("HADO_GATEWAY_TOKEN", SECRET), ("HADO_SECRET", SECRET)];
        let with = |pairs: &[(&'static str, &'static str)]| {
            let mut all = base.to_vec();
            all.extend_from_slice(pairs);
            config(&all)
        };
        assert!(with(&[]).unwrap().push.is_none());
        let on = with(&[("HADO_VAPID_SUBJECT", "mailto:ops@example.com")]).unwrap();
        assert_eq!(on.push.unwrap().subject, "mailto:ops@example.com");
        let key = "RS0WdYWWo1HajXg3NZR1olzCf31i-ZBGDkFyCs7j1jw";
        let given = with(&[
            ("HADO_VAPID_SUBJECT", "https://example.com/ops"),
            ("HADO_VAPID_PRIVATE_KEY", key),
        ]);
        assert_eq!(given.unwrap().push.unwrap().private_key.as_deref(), Some(key));
        for (pairs, variable) in [
            (vec![("HADO_VAPID_SUBJECT", "ops@example.com")], "HADO_VAPID_SUBJECT"),
            (vec![("HADO_VAPID_SUBJECT", "http://example.com")], "HADO_VAPID_SUBJECT"),
            (vec![("HADO_VAPID_PRIVATE_KEY", key)], "HADO_VAPID_SUBJECT"),
            (
                vec![
                    ("HADO_VAPID_SUBJECT", "mailto:ops@example.com"),
                    ("HADO_VAPID_PRIVATE_KEY", "c2hvcnQ"),
                ],
                "HADO_VAPID_PRIVATE_KEY",
            ),
        ] {
            let error = with(&pairs).unwrap_err();
            assert_eq!(error.variable, variable, "{pairs:?}");
            assert!(!error.to_string().contains("c2hvcnQ"), "a key is never shown: {error}");
        }
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

    #[test]
    fn the_mail_server_url_says_how_it_is_protected_and_never_shows_its_password() {
        let with = |url: &'static str, from: Option<&'static str>| {
            let mut pairs = vec![
                ("HADO_ADMIN_TOKEN", SECRET),
                ("HADO_GATEWAY_TOKEN", SECRET),
                ("HADO_SECRET", SECRET),
                ("HADO_SMTP_URL", url),
            ];
            pairs.extend(from.map(|from| ("HADO_SMTP_FROM", from)));
            config(&pairs)
        };
        let from = Some("Hado <hado@example.com>");
        let smtp = |url| with(url, from).unwrap().smtp.unwrap();
        let submission = smtp("smtp://anna:s%40cret-pass@mail.example.com");
        assert_eq!(
            (submission.host.as_str(), submission.port, submission.security),
            ("mail.example.com", 587, SmtpSecurity::StartTls)
        );
        assert_eq!(submission.credentials, Some(("anna".into(), "s@cret-pass".into())));
        assert!(!format!("{submission:?}").contains("cret"), "{submission:?}");
        let tls = smtp("smtps://mail.example.com");
        assert_eq!((tls.port, tls.security, tls.credentials), (465, SmtpSecurity::Tls, None));
        assert_eq!(smtp("smtp://127.0.0.1:2525").security, SmtpSecurity::Plain);
        assert_eq!(smtp("smtp://[::1]:2525").security, SmtpSecurity::Plain);
        assert_eq!(smtp("smtp://localhost").security, SmtpSecurity::Plain);
        let said = smtp("smtp://mail:25?tls=none");
        assert_eq!((said.host.as_str(), said.security), ("mail", SmtpSecurity::Plain));
        assert_eq!(smtp("smtp://mail.example.com?tls=required").security, SmtpSecurity::StartTls);
        assert_eq!(smtp("smtp://mail.example.com").from.email.to_string(), "hado@example.com");

        for (url, problem) in [
            ("http://anna:hunter2-secret@mail.example.com", "is not smtp://"),
            ("smtp://anna:hunter2-secret@mail.example.com?tls=maybe", "tls= is none"),
            ("smtp://anna:hunter2-secret@mail.example.com?port=1", "is not a setting"),
            ("smtps://anna:hunter2-secret@mail.example.com?tls=none", "TLS from the start"),
            ("smtp://anna@mail.example.com", "no password"),
            ("not a url hunter2-secret", "is not a URL"),
        ] {
            let error = with(url, from).unwrap_err();
            assert_eq!(error.variable, "HADO_SMTP_URL", "{url}");
            assert!(error.problem.contains(problem), "{url}: {error}");
            assert!(!error.to_string().contains("hunter2"), "{error}");
        }
        let missing = with("smtp://127.0.0.1", None).unwrap_err();
        assert_eq!(missing.variable, "HADO_SMTP_FROM");
        let bad = with("smtp://127.0.0.1", Some("not an address")).unwrap_err();
        assert_eq!(bad.variable, "HADO_SMTP_FROM");
    }
}

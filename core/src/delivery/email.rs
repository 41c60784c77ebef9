//! Owns reminders by email: the connection to the mail server
//! (`HADO_SMTP_URL`, through lettre with rustls), and how a send's answer
//! becomes an attempt's outcome. A refusal of the address for good (550–553)
//! pauses the channel with the server's words; any other refusal, a 4xx, a
//! timeout or a server that cannot be reached is retried on the outbox's
//! schedule. What a message says is `mail`.

use std::time::Duration;

use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::transport::smtp::extension::ClientId;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use crate::config::{CoreConfig, SmtpSecurity};

/// How long the mail server has for each step of a send.
const TIMEOUT: Duration = Duration::from_secs(15);

/// Sends email through the operator's mail server.
#[derive(Clone)]
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    pub(crate) from: lettre::message::Mailbox,
    /// The right-hand side of the Message-IDs: the sender's domain.
    pub(crate) domain: String,
}

/// How a send went, as far as the outbox cares.
pub(crate) enum Sent {
    Accepted,
    /// The server refused the address for good.
    Refused(String),
    /// Worth another try later; `strain` when the server seems overloaded
    /// or cannot be reached.
    Later {
        error: String,
        strain: bool,
    },
}

impl Mailer {
    /// The mailer `config` sets up, or none (and a line in the log saying
    /// why Settings offers no email) without `HADO_SMTP_URL`.
    pub fn of(config: &CoreConfig) -> Option<Self> {
        let Some(smtp) = &config.smtp else {
            tracing::info!(
                "email reminders are off: HADO_SMTP_URL is not set, so Settings offers no email address"
            );
            return None;
        };
        hado_engine::outbound_tls::install_tls_provider();
        let domain = smtp.from.email.domain().to_owned();
        let tls = |host: &str| TlsParameters::new(host.to_owned());
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&smtp.host)
            .port(smtp.port)
            .timeout(Some(TIMEOUT))
            .hello_name(ClientId::Domain(domain.clone()));
        let secured = match smtp.security {
            SmtpSecurity::Tls => tls(&smtp.host).map(Tls::Wrapper),
            SmtpSecurity::StartTls => tls(&smtp.host).map(Tls::Required),
            SmtpSecurity::Plain => Ok(Tls::None),
        };
        match secured {
            Ok(secured) => builder = builder.tls(secured),
            Err(error) => {
                tracing::error!(%error, host = %smtp.host, "email reminders are off: TLS to the mail server could not be set up");
                return None;
            }
        }
        if let Some((user, password)) = &smtp.credentials {
            builder = builder.credentials(Credentials::new(user.clone(), password.clone()));
        }
        tracing::info!(host = %smtp.host, port = smtp.port, security = ?smtp.security, "email reminders go through this mail server");
        Some(Self { transport: builder.build(), from: smtp.from.clone(), domain })
    }

    pub(crate) async fn send(&self, message: Message) -> Sent {
        match self.transport.send(message).await {
            Ok(_) => Sent::Accepted,
            Err(error) => {
                let code = error.status().map(u16::from);
                let said = format!("the mail server answered: {error}");
                match code {
                    // 550 mailbox unavailable, 551 not local, 552 over its
                    // quota, 553 not a valid mailbox: the address's own.
                    Some(550..=553) if error.is_permanent() => Sent::Refused(said),
                    // 421: the server is closing, so every address waits;
                    // another 4xx (a greylisted or full mailbox) is this
                    // address's alone, and the others go on.
                    Some(code) => Sent::Later { error: said, strain: code == 421 },
                    None if error.is_timeout() => Sent::Later {
                        error: format!(
                            "the mail server did not answer within {} s",
                            TIMEOUT.as_secs()
                        ),
                        strain: true,
                    },
                    None => Sent::Later {
                        error: format!("the mail server could not be reached: {error}"),
                        strain: true,
                    },
                }
            }
        }
    }
}

//! Owns the admin commands: each is one call to core's Admin service,
//! printed for a person.

use std::process::ExitCode;

use anyhow::{Context, bail};
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;

use hado_proto::metadata::{AUTHORIZATION, bearer};
use hado_proto::v1::admin_client::AdminClient;
use hado_proto::v1::{ListSourcesRequest, ListUsersRequest, SourceName, UserLogin};

use crate::settings::Settings;

type Client = AdminClient<tonic::service::interceptor::InterceptedService<Channel, AdminAuth>>;

#[derive(Clone)]
struct AdminAuth(MetadataValue<tonic::metadata::Ascii>);

impl tonic::service::Interceptor for AdminAuth {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        request.metadata_mut().insert(AUTHORIZATION, self.0.clone());
        Ok(request)
    }
}

/// How long an admin command waits for a core whose port refuses
/// connections: a core that is starting takes them only once its database
/// is open, so a command run right after `up` waits for it.
const WAIT_FOR_CORE: std::time::Duration = std::time::Duration::from_secs(10);

async fn client(settings: &Settings) -> anyhow::Result<Client> {
    let token = settings.secret("HADO_ADMIN_TOKEN")?;
    let url = settings.core_url();
    let endpoint = Channel::from_shared(url.clone()).with_context(|| {
        format!("HADO_CORE_URL {url:?} is not a URL such as http://127.0.0.1:50051")
    })?;
    let started = std::time::Instant::now();
    let mut said = false;
    let channel = loop {
        match endpoint.connect().await {
            Ok(channel) => break channel,
            Err(error) if refused(&error) && started.elapsed() < WAIT_FOR_CORE => {
                if !std::mem::replace(&mut said, true) {
                    eprintln!(
                        "hado: core at {url} takes no connection yet; waiting up to {} s (a core that is starting takes them once its database is open)",
                        WAIT_FOR_CORE.as_secs()
                    );
                }
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            Err(error) => {
                return Err(anyhow::Error::new(error)
                    .context(format!("cannot reach core at {url}; is `hado up` running?")));
            }
        }
    };
    let value = bearer(&token)
        .parse()
        .context("HADO_ADMIN_TOKEN holds characters a header cannot carry")?;
    Ok(AdminClient::with_interceptor(channel, AdminAuth(value)))
}

/// Whether a connection failed because nothing listens on the port (yet).
fn refused(error: &tonic::transport::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        {
            return true;
        }
        source = cause.source();
    }
    false
}

/// Core's message, as the person should read it.
fn failed(status: tonic::Status) -> anyhow::Error {
    anyhow::anyhow!("{}", status.message())
}

pub(crate) async fn create_source(settings: &Settings, name: &str) -> anyhow::Result<ExitCode> {
    let created = client(settings).await?.create_source(SourceName { name: name.into() }).await;
    let reply = match created {
        Ok(reply) => reply.into_inner(),
        // Core names the gRPC call; here the person has the command.
        Err(status) if status.code() == tonic::Code::AlreadyExists => {
            bail!(
                "source {name} already exists; to give it a new token, run `hado source rotate {name}`"
            )
        }
        Err(status) => return Err(failed(status)),
    };
    println!("Created source {}. Its token, shown this once:\n\n  {}\n", reply.name, reply.token);
    println!("Push events with it as `Authorization: Bearer <token>` (gRPC hado.v1.Ingest).");
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn rotate_source(settings: &Settings, name: &str) -> anyhow::Result<ExitCode> {
    let reply = client(settings)
        .await?
        .rotate_source_token(SourceName { name: name.into() })
        .await
        .map_err(failed)?
        .into_inner();
    println!(
        "New token for source {} (the old one stops working within a second), shown this once:\n\n  {}\n",
        reply.name, reply.token
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn list_sources(settings: &Settings) -> anyhow::Result<ExitCode> {
    let reply = client(settings)
        .await?
        .list_sources(ListSourcesRequest {})
        .await
        .map_err(failed)?
        .into_inner();
    println!("{:<24} {:>8}  {:<6} created", "source", "events", "token");
    for source in reply.sources {
        let token = if source.has_token { "yes" } else { "-" };
        let created = hado_proto::convert::rfc3339(source.created_at.as_ref());
        println!("{:<24} {:>8}  {:<6} {created}", source.name, source.events, token);
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn delete_source(
    settings: &Settings,
    name: &str,
    confirmed: bool,
) -> anyhow::Result<ExitCode> {
    if !confirmed {
        bail!(
            "deleting source {name} deletes all of its events too; run again with --yes to confirm"
        );
    }
    let reply = client(settings)
        .await?
        .delete_source(SourceName { name: name.into() })
        .await
        .map_err(failed)?
        .into_inner();
    println!("Deleted source {} and its {} events.", reply.name, reply.deleted_events);
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn agent_token(
    settings: &Settings,
    login: &str,
    revoke: bool,
) -> anyhow::Result<ExitCode> {
    let mut client = client(settings).await?;
    if revoke {
        let reply = client
            .revoke_agent_token(UserLogin { login: login.into() })
            .await
            .map_err(failed)?
            .into_inner();
        if reply.revoked {
            println!("Revoked the agent token of {login}.");
        } else {
            println!("{login} had no agent token.");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let reply = client
        .issue_agent_token(UserLogin { login: login.into() })
        .await
        .map_err(failed)?
        .into_inner();
    println!(
        "Agent token for {} (any earlier one no longer works), shown this once:\n\n  {}\n",
        reply.login, reply.token
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) async fn list_users(settings: &Settings) -> anyhow::Result<ExitCode> {
    let reply =
        client(settings).await?.list_users(ListUsersRequest {}).await.map_err(failed)?.into_inner();
    println!(
        "{:<24} {:<22} {:<12} {:<6} {:>7}  agent token",
        "login", "time zone", "quiet", "lang", "active"
    );
    for user in reply.users {
        let quiet = format!("{}-{}", user.quiet_start, user.quiet_end);
        let token = if user.has_agent_token { "yes" } else { "-" };
        println!(
            "{:<24} {:<22} {:<12} {:<6} {:>7}  {}",
            user.login, user.tz, quiet, user.locale, user.active_events, token
        );
    }
    Ok(ExitCode::SUCCESS)
}

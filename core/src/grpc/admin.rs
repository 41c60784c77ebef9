//! Owns the `hado.v1.Admin` service: the operator's calls.

use std::sync::Arc;

use tonic::{Request, Response, Status};

use hado_proto::v1::{self, admin_server::Admin};

use super::auth::{self, Credentials};
use crate::status::OrStatus;
use crate::wire;
use hado_domain::profile::format_clock_time;
use hado_engine::Engine;

pub(crate) struct AdminService {
    pub(crate) engine: Arc<Engine>,
    pub(crate) credentials: Credentials,
}

impl AdminService {
    fn admit<T>(&self, request: &Request<T>) -> Result<(), Status> {
        auth::admin(&self.credentials, request.metadata()).or_status()
    }
}

#[tonic::async_trait]
impl Admin for AdminService {
    async fn create_source(
        &self,
        request: Request<v1::SourceName>,
    ) -> Result<Response<v1::SourceToken>, Status> {
        self.admit(&request)?;
        let (name, token) = self.engine.create_source(&request.get_ref().name).await.or_status()?;
        tracing::info!(source = %name, "source created");
        Ok(Response::new(v1::SourceToken { name: name.to_string(), token }))
    }

    async fn rotate_source_token(
        &self,
        request: Request<v1::SourceName>,
    ) -> Result<Response<v1::SourceToken>, Status> {
        self.admit(&request)?;
        let (name, token) =
            self.engine.rotate_source_token(&request.get_ref().name).await.or_status()?;
        tracing::info!(source = %name, "source token rotated");
        Ok(Response::new(v1::SourceToken { name: name.to_string(), token }))
    }

    async fn list_sources(
        &self,
        request: Request<v1::ListSourcesRequest>,
    ) -> Result<Response<v1::SourceList>, Status> {
        self.admit(&request)?;
        let sources = self
            .engine
            .list_sources()
            .await
            .or_status()?
            .into_iter()
            .map(|source| v1::Source {
                name: source.name,
                has_token: source.has_token,
                events: source.events,
                created_at: Some(wire::timestamp(source.created_at)),
            })
            .collect();
        Ok(Response::new(v1::SourceList { sources }))
    }

    async fn delete_source(
        &self,
        request: Request<v1::SourceName>,
    ) -> Result<Response<v1::DeleteSourceReply>, Status> {
        self.admit(&request)?;
        let (name, deleted) =
            self.engine.delete_source(&request.get_ref().name).await.or_status()?;
        tracing::info!(source = %name, deleted_events = deleted, "source deleted");
        Ok(Response::new(v1::DeleteSourceReply {
            name: name.to_string(),
            deleted_events: deleted as i64,
        }))
    }

    async fn issue_agent_token(
        &self,
        request: Request<v1::UserLogin>,
    ) -> Result<Response<v1::AgentToken>, Status> {
        self.admit(&request)?;
        let (user, token) =
            self.engine.admin_issue_agent_token(&request.get_ref().login).await.or_status()?;
        tracing::info!(user = %user.login, "agent token issued");
        Ok(Response::new(v1::AgentToken { login: user.login.to_string(), token }))
    }

    async fn revoke_agent_token(
        &self,
        request: Request<v1::UserLogin>,
    ) -> Result<Response<v1::RevokeReply>, Status> {
        self.admit(&request)?;
        let revoked =
            self.engine.admin_revoke_agent_token(&request.get_ref().login).await.or_status()?;
        Ok(Response::new(v1::RevokeReply { revoked }))
    }

    async fn list_users(
        &self,
        request: Request<v1::ListUsersRequest>,
    ) -> Result<Response<v1::UserList>, Status> {
        self.admit(&request)?;
        let users = self
            .engine
            .list_users()
            .await
            .or_status()?
            .into_iter()
            .map(|summary| v1::User {
                login: summary.user.login.to_string(),
                tz: summary.user.zone.name().to_owned(),
                quiet_start: format_clock_time(summary.user.quiet.start),
                quiet_end: format_clock_time(summary.user.quiet.end),
                locale: summary.user.locale.as_str().to_owned(),
                has_agent_token: summary.has_agent_token,
                active_events: summary.active_events,
                created_at: Some(wire::timestamp(summary.created_at)),
            })
            .collect();
        Ok(Response::new(v1::UserList { users }))
    }
}

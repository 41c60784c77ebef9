//! Owns the `hado.v1.OAuth` service: signing agents in. Registration and
//! the token endpoint take no credential (the client's own is in the
//! request); checking a request takes the gateway credential, and the
//! person's answer the gateway credential with the person. A refusal the
//! OAuth RFCs define travels in the reply, with its code.

use std::sync::Arc;

use tonic::{Request, Response, Status};

use hado_proto::v1::{self, o_auth_server::OAuth};

use super::auth::{self, Credentials};
use crate::status::OrStatus;
use crate::wire;
use hado_domain::oauth::{AuthorizationParams, Refusal};
use hado_engine::{Engine, OAuthFailure, TokenParams, Verdict};

pub(crate) struct OAuthService {
    pub(crate) engine: Arc<Engine>,
    pub(crate) credentials: Credentials,
}

fn error(refusal: Refusal) -> v1::OAuthError {
    v1::OAuthError { error: refusal.code.to_owned(), description: refusal.description }
}

fn params(request: &v1::AuthorizationRequest) -> AuthorizationParams {
    AuthorizationParams {
        response_type: request.response_type.clone(),
        client_id: request.client_id.clone(),
        redirect_uri: request.redirect_uri.clone(),
        code_challenge: request.code_challenge.clone(),
        code_challenge_method: request.code_challenge_method.clone(),
        state: request.state.clone(),
        resource: request.resource.clone(),
        scope: request.scope.clone(),
        served_resource: request.served_resource.clone(),
    }
}

fn check(verdict: Verdict) -> v1::AuthorizationCheck {
    match verdict {
        Verdict::Ask(asking) => v1::AuthorizationCheck {
            redirect_to: String::new(),
            error: None,
            client_name: asking.client.metadata.name.clone(),
            redirect_host: hado_domain::oauth::host_of(&asking.redirect_uri),
            ..Default::default()
        },
        Verdict::Redirect { to, refusal } => v1::AuthorizationCheck {
            redirect_to: to,
            error: refusal.map(error),
            ..Default::default()
        },
        Verdict::Show(unfit) => v1::AuthorizationCheck {
            error: Some(error(unfit.refusal)),
            problem: wire::authorization_problem(unfit.problem).into(),
            ..Default::default()
        },
    }
}

#[tonic::async_trait]
impl OAuth for OAuthService {
    async fn register_client(
        &self,
        request: Request<v1::RegisterClientRequest>,
    ) -> Result<Response<v1::RegisterClientReply>, Status> {
        let outcome = match self.engine.register_client(&request.get_ref().metadata_json).await {
            Ok(client_json) => v1::register_client_reply::Outcome::ClientJson(client_json),
            Err(OAuthFailure::Refused(refusal)) => {
                v1::register_client_reply::Outcome::Error(error(refusal))
            }
            Err(OAuthFailure::Core(failure)) => return Err(crate::status::status(failure)),
        };
        Ok(Response::new(v1::RegisterClientReply { outcome: Some(outcome) }))
    }

    async fn check_authorization(
        &self,
        request: Request<v1::AuthorizationRequest>,
    ) -> Result<Response<v1::AuthorizationCheck>, Status> {
        auth::gateway(&self.credentials, request.metadata()).or_status()?;
        Ok(Response::new(check(
            self.engine.check_authorization(&params(request.get_ref())).await.or_status()?,
        )))
    }

    async fn approve(
        &self,
        request: Request<v1::AuthorizationRequest>,
    ) -> Result<Response<v1::AuthorizationCheck>, Status> {
        let user =
            auth::person(&self.engine, &self.credentials, request.metadata()).await.or_status()?;
        Ok(Response::new(check(
            self.engine.approve(&user, &params(request.get_ref())).await.or_status()?,
        )))
    }

    async fn deny(
        &self,
        request: Request<v1::AuthorizationRequest>,
    ) -> Result<Response<v1::AuthorizationCheck>, Status> {
        auth::person(&self.engine, &self.credentials, request.metadata()).await.or_status()?;
        Ok(Response::new(check(self.engine.deny(&params(request.get_ref())).await.or_status()?)))
    }

    async fn token(
        &self,
        request: Request<v1::TokenRequest>,
    ) -> Result<Response<v1::TokenReply>, Status> {
        let body = request.into_inner();
        let params = TokenParams {
            grant_type: body.grant_type,
            client_id: body.client_id,
            code: body.code,
            redirect_uri: body.redirect_uri,
            code_verifier: body.code_verifier,
            refresh_token: body.refresh_token,
            resource: body.resource,
            served_resource: body.served_resource,
        };
        let outcome = match self.engine.token(&params).await {
            Ok(issued) => v1::token_reply::Outcome::Tokens(v1::TokenGrant {
                access_token: issued.access_token,
                expires_in: issued.expires_in,
                refresh_token: issued.refresh_token,
                scope: issued.scope.to_owned(),
            }),
            Err(OAuthFailure::Refused(refusal)) => v1::token_reply::Outcome::Error(error(refusal)),
            Err(OAuthFailure::Core(failure)) => return Err(crate::status::status(failure)),
        };
        Ok(Response::new(v1::TokenReply { outcome: Some(outcome) }))
    }
}

//! Owns the `hado.v1.Links` service: checking and using action links, for
//! the HTTP gateway only (its credential, no user: the link names the user).

use std::sync::Arc;

use tonic::{Request, Response, Status};

use hado_proto::v1::{self, links_server::Links};

use super::auth::{self, Credentials};
use super::convert;
use crate::engine::Engine;
use crate::links::ActionLink;
use crate::storage::{EventRecord, UserRecord};

pub struct LinksService {
    pub engine: Arc<Engine>,
    pub credentials: Credentials,
}

fn reply((link, user, event): (ActionLink, UserRecord, EventRecord), now: chrono::DateTime<chrono::Utc>) -> Response<v1::ActionLinkReply> {
    Response::new(v1::ActionLinkReply {
        action: link.action.as_str().to_owned(),
        event: Some(convert::event(&event)),
        expires_at: convert::timestamp(link.expires_at),
        profile: Some(convert::profile(&user, now)),
    })
}

#[tonic::async_trait]
impl Links for LinksService {
    async fn inspect_action_link(&self, request: Request<v1::ActionLinkRequest>) -> Result<Response<v1::ActionLinkReply>, Status> {
        auth::gateway(&self.credentials, request.metadata())?;
        Ok(reply(self.engine.inspect_action_link(&request.get_ref().token).await?, self.engine.now()))
    }

    async fn use_action_link(&self, request: Request<v1::ActionLinkRequest>) -> Result<Response<v1::ActionLinkReply>, Status> {
        auth::gateway(&self.credentials, request.metadata())?;
        Ok(reply(self.engine.use_action_link(&request.get_ref().token).await?, self.engine.now()))
    }
}

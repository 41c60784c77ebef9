//! Owns the `hado.v1.Ingest` service: a source's batches, withdrawals and
//! reads of its own events.

use std::sync::Arc;

use tonic::{Request, Response, Status};

use hado_proto::v1::{self, ingest_server::Ingest};

use super::auth;
use crate::status::OrStatus;
use crate::wire;
use crate::wire::raw_fields;
use hado_engine::{Engine, RawKey, SourceItem};

pub(crate) struct IngestService {
    pub(crate) engine: Arc<Engine>,
}

#[tonic::async_trait]
impl Ingest for IngestService {
    async fn upsert_events(
        &self,
        request: Request<v1::UpsertEventsRequest>,
    ) -> Result<Response<v1::UpsertEventsReply>, Status> {
        let source = auth::source(&self.engine, request.metadata()).await.or_status()?;
        let items: Vec<SourceItem> = request
            .into_inner()
            .events
            .into_iter()
            .map(|item| SourceItem {
                user: item.user,
                source_ref: item.r#ref,
                topic: item.topic,
                fields: raw_fields(item.fields.unwrap_or_default()),
            })
            .collect();
        let reports = self.engine.upsert_batch(&source, &items).await.or_status()?;
        let results = reports
            .into_iter()
            .map(|report| v1::UpsertResult {
                id: report.id,
                outcome: wire::outcome(report.outcome).into(),
                state: wire::state(report.state).into(),
            })
            .collect();
        Ok(Response::new(v1::UpsertEventsReply { results }))
    }

    async fn withdraw_events(
        &self,
        request: Request<v1::WithdrawEventsRequest>,
    ) -> Result<Response<v1::WithdrawEventsReply>, Status> {
        let source = auth::source(&self.engine, request.metadata()).await.or_status()?;
        let keys: Vec<RawKey> = request
            .into_inner()
            .keys
            .into_iter()
            .map(|key| RawKey { user: key.user, source_ref: key.r#ref, topic: key.topic })
            .collect();
        let reports = self.engine.withdraw_batch(&source, &keys).await.or_status()?;
        let results = reports
            .into_iter()
            .map(|report| match report.found {
                Some((id, state)) => {
                    v1::WithdrawResult { found: true, id, state: wire::state(state).into() }
                }
                None => v1::WithdrawResult {
                    found: false,
                    id: 0,
                    state: v1::EventState::Unspecified.into(),
                },
            })
            .collect();
        Ok(Response::new(v1::WithdrawEventsReply { results }))
    }

    async fn who_am_i(
        &self,
        request: Request<v1::WhoAmIRequest>,
    ) -> Result<Response<v1::WhoAmIReply>, Status> {
        let source = auth::source(&self.engine, request.metadata()).await.or_status()?;
        Ok(Response::new(v1::WhoAmIReply { source: source.name.to_string() }))
    }

    async fn list_events(
        &self,
        request: Request<v1::IngestListRequest>,
    ) -> Result<Response<v1::EventList>, Status> {
        let source = auth::source(&self.engine, request.metadata()).await.or_status()?;
        let body = request.into_inner();
        let records =
            self.engine.list_for_source(&source, &body.user, &body.refs).await.or_status()?;
        Ok(Response::new(wire::events(records)))
    }
}

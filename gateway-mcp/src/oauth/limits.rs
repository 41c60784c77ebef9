//! Owns the allowances of signing in's write routes: requests a minute per
//! client address, a used-up one answered 429 with `Retry-After`.

use std::net::IpAddr;

use axum::http::StatusCode;

use hado_gateway::per_minute::PerMinute;

use crate::oauth::refused::Refused;

/// Requests a minute per client address.
pub(super) struct AddressLimit(PerMinute<IpAddr>);

impl AddressLimit {
    pub(super) fn per_minute(per_minute: u32) -> Self {
        Self(PerMinute::new(per_minute))
    }

    pub(super) fn take(&self, address: IpAddr, what: &str) -> Result<(), Refused> {
        self.0.take(&address).map_err(|wait| {
            let seconds = wait.as_secs().max(1);
            let description = format!(
                "too many {what}: at most {} a minute from one address; try again in {seconds} s",
                self.0.per_minute()
            );
            Refused {
                status: StatusCode::TOO_MANY_REQUESTS,
                code: "temporarily_unavailable",
                description,
                retry_after: Some(seconds),
            }
        })
    }
}

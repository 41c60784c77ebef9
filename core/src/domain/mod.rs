//! Hado's rules with no IO, no async and no clock: values are parsed into
//! types here once, and time always comes in as an argument.

pub(crate) mod address;
pub(crate) mod cases;
pub(crate) mod channel;
pub mod checkpoints;
pub(crate) mod delivery;
pub(crate) mod device;
pub mod event;
pub(crate) mod event_record;
pub mod fields;
pub mod oauth;
pub mod profile;
pub mod reminders;
pub(crate) mod source;
pub mod state;
pub(crate) mod text;
pub mod time;
pub(crate) mod user;
pub mod violations;

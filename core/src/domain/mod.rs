//! Hado's rules with no IO, no async and no clock: values are parsed into
//! types here once, and time always comes in as an argument.

pub(crate) mod address;
pub mod checkpoints;
pub(crate) mod device;
pub mod event;
pub mod fields;
pub mod oauth;
pub mod profile;
pub mod reminders;
pub mod state;
pub(crate) mod text;
pub mod time;
pub mod violations;

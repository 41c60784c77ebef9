//! Hado's rules with no IO, no async and no clock: values are parsed into
//! types here once, and time always comes in as an argument.

pub mod address;
pub mod cases;
pub mod channel;
pub mod checkpoints;
pub mod delivery;
pub mod device;
pub mod event;
pub mod event_record;
pub mod fields;
pub mod oauth;
pub mod profile;
pub mod reminders;
pub mod source;
pub mod state;
pub mod text;
pub mod time;
pub mod user;
pub mod violations;

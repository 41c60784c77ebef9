//! Owns the words the model reads once, when it connects: what Hado is, the
//! states, Done against Remember, whose events it may change, and the three
//! forms of a due moment, in fifteen lines at most.

/// What the model reads once, when it connects.
pub(crate) const INSTRUCTIONS: &str = "\
Hado is the user's deadline inbox; you act as the user, on their events only.
Active states, by urgency: scheduled (not yet preparing), preparing (from fire_at), today (due today), overdue (past due, after_due=keep). needs_attention means a reminder reached the user and is unanswered.
The archive holds done, expired and deleted (withdrawn) events (after_due=expire closes as expired after the due day).
mark_done means the thing is finished: the event closes. mark_ack is Remember: \"I know\", the event stays open and reminders go quiet until the next checkpoint, or until tomorrow, next week or a day the user names (until). Never use one for the other.
Events from other sources (docs, a bank, …) can be read and closed with mark_done or mark_ack, but not changed or deleted: editable=false. Their source would overwrite an edit.
Events you create belong to the source manual, like ones the user adds by hand; those you may update and delete (editable=true). A deleted event stays readable (state withdrawn) and update_event brings it back.
Undo: reopen_event undoes mark_done and delete_event; restore_reminders undoes mark_ack. An event its source withdrew cannot be acted on (EVENT_WITHDRAWN).
due_at takes three forms: YYYY-MM-DD (a whole day), YYYY-MM-DDTHH:MM (a local time in the user's zone), or with an offset such as 2026-12-14T09:00+01:00 (a fixed instant). Use an offset only when the event is tied to a place.
Call get_profile for the user's zone and current local time before resolving words like \"tomorrow\".
A recurring thing is separate events: create one per occurrence that matters now, not a rule.";

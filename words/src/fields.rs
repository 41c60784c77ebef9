//! Owns what each of an event's fields is, said once: its name on every
//! wire, how many characters it may hold, and what it means to whoever
//! writes it (a source's developer reading the OpenAPI document, a model
//! reading an MCP tool's schema, a person at the web form). Core's
//! validation takes the limits from here; the MCP tools' schemas, the
//! OpenAPI document and the web form take the limits and the descriptions,
//! and the proto's `EventFields` points here. A limit or a description
//! written anywhere else is a second copy that can drift
//! (`cli/tests/it/architecture.rs` looks for one).
//!
//! Characters are Unicode scalar values, counted after trimming where the
//! field is trimmed. The descriptions are English: they are read by the
//! people and programs that write to Hado's interfaces, which speak it.

/// One field of an event, or of what finds one.
pub struct Field {
    /// Its name in JSON, in an MCP tool's arguments, in a form and in the
    /// proto.
    pub name: &'static str,
    /// The fewest characters: 1 where a value is required and may not be
    /// blank, 0 otherwise.
    pub min: usize,
    /// The most characters.
    pub max: usize,
    /// What it means, and what it defaults to; its limit is added by
    /// [`Field::description`].
    pub meaning: &'static str,
    /// Free text, whose description states its limit; a value of a fixed
    /// form (a date, a keyword) says its form in its meaning instead.
    pub free_text: bool,
    /// What giving it on an edit does beyond setting it (an empty string
    /// that clears it, a new due moment that reopens), or "".
    pub on_edit: &'static str,
}

impl Field {
    /// What the field means, with its limit: the description every schema
    /// gives it.
    pub fn description(&self) -> String {
        match self.min {
            _ if !self.free_text => self.meaning.to_owned(),
            0 => format!("{} At most {} characters.", self.meaning, self.max),
            min => format!("{} {min} to {} characters.", self.meaning, self.max),
        }
    }

    /// The description of the field in an edit, where leaving it out keeps
    /// what the event has.
    pub fn edit_description(&self) -> String {
        let kept = "Leave out to keep the event's.";
        match self.on_edit {
            "" => format!("{} {kept}", self.description()),
            more => format!("{} {more} {kept}", self.description()),
        }
    }
}

/// The login of the person an event is for.
pub const USER: Field = Field {
    name: "user",
    min: 1,
    max: 64,
    meaning: "The login of the person the event is for, created on first sight: a letter or \
              digit, then letters, digits and . _ @ -. Logins are not case sensitive: Anna is \
              the user anna.",
    free_text: false,
    on_edit: "",
};

/// A source's own key for an event.
pub const REF: Field = Field {
    name: "ref",
    min: 1,
    max: 255,
    meaning: "The source's own key for the event, kept exactly as given.",
    free_text: true,
    on_edit: "",
};

/// The second part of an event's key.
pub const TOPIC: Field = Field {
    name: "topic",
    min: 0,
    max: 64,
    meaning: "A second part of the key, for several events per ref; often empty.",
    free_text: true,
    on_edit: "",
};

/// What is due.
pub const TITLE: Field = Field {
    name: "title",
    min: 1,
    max: 200,
    meaning: "What is due, not all blank.",
    free_text: true,
    on_edit: "",
};

/// A second line under the title.
pub const SUBTITLE: Field = Field {
    name: "subtitle",
    min: 0,
    max: 200,
    meaning: "A second line of detail.",
    free_text: true,
    on_edit: "An empty string removes it.",
};

/// When an event is due.
pub const DUE_AT: Field = Field {
    name: "due_at",
    min: 1,
    // YYYY-MM-DDTHH:MM+HH:MM
    max: 22,
    meaning: "When it is due. YYYY-MM-DD for a whole day; YYYY-MM-DDTHH:MM for a local time that \
              follows the user's time zone; YYYY-MM-DDTHH:MM+HH:MM (with an offset) for a fixed \
              instant. Give an offset only when the event is tied to a place (a flight, an \
              appointment in another city).",
    free_text: false,
    on_edit: "A different due_at is a reschedule: it reopens a done or expired event and clears \
              Remember. The same due_at changes only the other fields.",
};

/// The day preparing starts.
pub const FIRE_AT: Field = Field {
    name: "fire_at",
    min: 0,
    max: "YYYY-MM-DD".len(),
    meaning: "The day preparing starts, YYYY-MM-DD, no later than the due day. Default: 30 days \
              before the due day.",
    free_text: false,
    on_edit: "An empty string returns to the default.",
};

/// What happens after the due day.
pub const AFTER_DUE: Field = Field {
    name: "after_due",
    min: 0,
    max: "expire".len(),
    meaning: "keep: the event stays overdue until done (the default). expire: it closes as \
              expired after the due day.",
    free_text: false,
    on_edit: "",
};

/// The Done button's label.
pub const DONE_LABEL: Field = Field {
    name: "done_label",
    min: 0,
    max: 64,
    meaning: "The label of the Done button. Default: Done, in the user's language.",
    free_text: true,
    on_edit: "An empty string returns to the default.",
};

/// Where a reminder's link goes.
pub const DEEP_LINK: Field = Field {
    name: "deep_link",
    min: 0,
    max: 2048,
    meaning: "A link the reminder opens, such as the page where the thing gets done: an absolute \
              http or https URL with a host and no user name or password.",
    free_text: true,
    on_edit: "An empty string removes it.",
};

/// The text a list of events is searched for.
pub const SEARCH: Field = Field {
    name: "text",
    min: 0,
    max: 200,
    meaning: "Only events whose title or subtitle holds this text, in any letter case.",
    free_text: true,
    on_edit: "",
};

/// The name of the source a list of events is narrowed to.
pub const SOURCE: Field = Field {
    name: "source",
    min: 0,
    max: 50,
    meaning: "Only events of this source, such as docs; manual for the user's own.",
    free_text: false,
    on_edit: "",
};

/// Where the next page of a list of events starts: a previous page's
/// `next`, which no one writes by hand.
pub const AFTER: Field = Field {
    name: "after",
    min: 0,
    max: 200,
    meaning: "Active events only: go on just after a previous result's next.",
    free_text: false,
    on_edit: "",
};

/// Every field above, for the checks that each is said once.
pub const ALL: [&Field; 13] = [
    &USER,
    &REF,
    &TOPIC,
    &TITLE,
    &SUBTITLE,
    &DUE_AT,
    &FIRE_AT,
    &AFTER_DUE,
    &DONE_LABEL,
    &DEEP_LINK,
    &SEARCH,
    &SOURCE,
    &AFTER,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_ends_with_the_limit() {
        assert_eq!(TITLE.description(), "What is due, not all blank. 1 to 200 characters.");
        assert_eq!(SUBTITLE.description(), "A second line of detail. At most 200 characters.");
    }

    #[test]
    fn an_edit_says_what_an_empty_string_does_and_that_leaving_out_keeps() {
        assert_eq!(
            SUBTITLE.edit_description(),
            "A second line of detail. At most 200 characters. An empty string removes it. \
             Leave out to keep the event's."
        );
        assert_eq!(
            TITLE.edit_description(),
            "What is due, not all blank. 1 to 200 characters. Leave out to keep the event's."
        );
    }

    #[test]
    fn every_field_has_a_name_a_limit_and_a_meaning_of_its_own() {
        for field in ALL {
            assert!(field.max >= field.min.max(1), "{}", field.name);
            assert!(field.meaning.ends_with('.'), "{}", field.name);
        }
        assert_eq!(DUE_AT.description(), DUE_AT.meaning, "a date says its own form");
        let names: std::collections::BTreeSet<_> = ALL.iter().map(|field| field.name).collect();
        assert_eq!(names.len(), ALL.len());
    }
}

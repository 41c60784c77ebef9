//! A batch's columns as Postgres arrays written out as text, for the
//! statements that spread a batch into rows with `unnest`. The `Any` driver
//! binds no arrays, so each column travels as one text parameter in
//! Postgres's array syntax and the server casts it (`$1::text[]`).
//!
//! Written here rather than taken from a crate: the format is a few lines of
//! the PostgreSQL manual ("Array Value Input"), and the Postgres crates
//! write arrays only in the binary form the `Any` driver cannot carry.
//! The server reads a batch's rows from such arrays in about two thirds of
//! the time it takes to read the same rows from JSON (BENCHMARKS.md).

/// One column of a batch, such as `{"a","b",NULL}` or `{1,NULL,3}`.
#[derive(Debug)]
pub(crate) struct ArrayText(String);

impl ArrayText {
    pub(crate) fn new() -> Self {
        Self(String::from("{"))
    }

    fn separate(&mut self) {
        if self.0.len() > 1 {
            self.0.push(',');
        }
    }

    /// A text element: always quoted, with `"` and `\` escaped, so that
    /// commas, braces, spaces and the word NULL stay the text they are.
    pub(crate) fn text(&mut self, value: Option<&str>) {
        self.separate();
        let Some(value) = value else {
            self.0.push_str("NULL");
            return;
        };
        self.0.push('"');
        for character in value.chars() {
            if matches!(character, '"' | '\\') {
                self.0.push('\\');
            }
            self.0.push(character);
        }
        self.0.push('"');
    }

    /// A number element.
    pub(crate) fn number(&mut self, value: Option<i64>) {
        self.separate();
        match value {
            Some(value) => self.0.push_str(&value.to_string()),
            None => self.0.push_str("NULL"),
        }
    }

    /// The array's text, to bind for a `$n::text[]` or `$n::bigint[]` cast.
    pub(crate) fn finish(mut self) -> String {
        self.0.push('}');
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_quoted_escaped_or_null() {
        let mut texts = ArrayText::new();
        for value in [
            Some("plain"),
            Some("a \"quoted\", {braced} \\ text"),
            None,
            Some("NULL"),
            Some(""),
            Some("Ёлка 🎄"),
        ] {
            texts.text(value);
        }
        assert_eq!(
            texts.finish(),
            r#"{"plain","a \"quoted\", {braced} \\ text",NULL,"NULL","","Ёлка 🎄"}"#
        );
        let mut numbers = ArrayText::new();
        for value in [Some(-1), None, Some(i64::MAX)] {
            numbers.number(value);
        }
        assert_eq!(numbers.finish(), "{-1,NULL,9223372036854775807}");
        assert_eq!(ArrayText::new().finish(), "{}");
    }
}

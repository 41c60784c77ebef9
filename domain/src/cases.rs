//! Owns how a fixed set of cases is declared: an enum whose every case is
//! listed once in `ALL` and spelled once in `as_str`, the word the database
//! column holds. Storage reads a column back through `from_stored`; core's
//! `wire.rs` matches each case onto the contract's enum, and a test there
//! holds the wire's words to these. `State` (`domain/state.rs`) is spelled the
//! same way by hand, beside its lists of active and archived states.

/// A stored word that names no case: damage, since only `as_str` writes one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{word:?} is not a {of}")]
pub struct UnknownWord {
    pub word: String,
    pub of: &'static str,
}

/// Declares an enum of a fixed set of cases, each with its one word.
macro_rules! fixed_cases {
    ($(#[$doc:meta])* $name:ident { $($(#[$variant_doc:meta])* $variant:ident => $word:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$variant_doc])* $variant),+
        }

        impl $name {
            /// Every case, in the order declared.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The case's word, as the database column holds it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $word),+
                }
            }

            /// Reads a stored word back; another word is an [`UnknownWord`].
            pub fn from_stored(word: &str) -> Result<Self, $crate::cases::UnknownWord> {
                Self::ALL.iter().copied().find(|case| case.as_str() == word).ok_or_else(|| {
                    $crate::cases::UnknownWord { word: word.to_owned(), of: stringify!($name) }
                })
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use fixed_cases;

#[cfg(test)]
// The macro makes its type's items public, as every caller's are.
#[allow(unreachable_pub)]
mod tests {
    fixed_cases!(
        /// A set for the test.
        Weather {
            Sunny => "sunny",
            Rainy => "rainy",
        }
    );

    #[test]
    fn every_case_reads_back_from_its_word_and_another_word_is_named_in_the_refusal() {
        assert_eq!(Weather::ALL, [Weather::Sunny, Weather::Rainy]);
        for each in Weather::ALL {
            assert_eq!(Weather::from_stored(each.as_str()), Ok(*each));
            assert_eq!(each.to_string(), each.as_str());
        }
        let refused = Weather::from_stored("Sunny").unwrap_err();
        assert_eq!(refused.to_string(), "\"Sunny\" is not a Weather");
    }
}

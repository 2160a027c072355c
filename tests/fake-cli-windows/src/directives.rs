//! What the prompt asks of the fake: whitespace-separated tokens anywhere in it, and in the
//! environment variable `FAKE_CLI_DIRECTIVES` (placed before the prompt, as the Linux fake
//! does). Other words are ignored; for a repeated directive the last one wins.
//!
//! | directive | effect |
//! |---|---|
//! | `tree` | builds the process tree (tree.rs) before answering, and reports it as a reasoning item |
//! | `hang` | after the tree's report, sleeps until killed: no answer, no terminal event |
//! | `exit=N` | exits with N after the terminal event (default 0) |

/// The environment variable whose directives come before the prompt's.
pub const DIRECTIVES_VAR: &str = "FAKE_CLI_DIRECTIVES";

/// The directives of one run.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Directives {
    pub tree: bool,
    pub hang: bool,
    pub exit: u8,
}

impl Directives {
    /// The environment's directives, then the prompt's.
    pub fn read(prompt: &[u8]) -> Self {
        let from_env = std::env::var(DIRECTIVES_VAR).unwrap_or_default();
        Self::parse(&format!("{from_env} {}", String::from_utf8_lossy(prompt)))
    }

    fn parse(text: &str) -> Self {
        let mut d = Self::default();
        for word in text.split_whitespace() {
            match word.split_once('=') {
                None if word == "tree" => d.tree = true,
                None if word == "hang" => d.hang = true,
                Some(("exit", n)) => d.exit = n.parse().unwrap_or(d.exit),
                _ => {}
            }
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_are_words_anywhere_and_others_are_ignored() {
        let d = Directives::parse("please\ntree and then hang exit=7 treehouse");
        assert_eq!(
            d,
            Directives {
                tree: true,
                hang: true,
                exit: 7
            }
        );
        assert_eq!(
            Directives::parse("a tree-less prompt"),
            Directives::default()
        );
    }

    #[test]
    fn the_last_exit_wins_and_a_bad_one_is_ignored() {
        assert_eq!(Directives::parse("exit=3 exit=4").exit, 4);
        assert_eq!(Directives::parse("exit=3 exit=x").exit, 3);
    }
}

//! Reading a CLI's version from what its `--version` printed, so `doctor` can tell a verified
//! install from one whose output the parsers were never checked against, and a newer release
//! from an older one. Each CLI words it differently: `codex-cli 0.171.0`,
//! `2.1.332 (Claude Code)`, `0.61.0`.

use std::cmp::Ordering;

/// The words of `--version` output: split at white space and parentheses.
pub fn words(output: &str) -> impl Iterator<Item = &str> {
    output.split(|c: char| c.is_whitespace() || c == '(' || c == ')')
}

/// The first word that reads `X.Y.Z` (a leading `v` dropped; more parts, a pre-release such as
/// codex's `-alpha.3` or a build `+abc` may follow).
pub fn first_version<'a>(mut words: impl Iterator<Item = &'a str>) -> Option<String> {
    words
        .find_map(|word| {
            let word = word.trim_start_matches('v');
            let core = word.split(['-', '+']).next().unwrap_or_default();
            let parts: Vec<&str> = core.split('.').collect();
            let numbered = parts.len() >= 3
                && parts[..3]
                    .iter()
                    .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
            numbered.then_some(word)
        })
        .map(str::to_owned)
}

/// How release `found` stands against release `than`, both `X.Y.Z` with an optional
/// pre-release (`-beta.1`) and build (`+abc`): by `X.Y.Z`, then a pre-release before its
/// release. `None` when either is no such version, or for two different pre-releases of one
/// release, which semver orders by rules no CLI's doctor line needs.
pub fn compare(found: &str, than: &str) -> Option<Ordering> {
    let (found, than) = (Release::parse(found)?, Release::parse(than)?);
    match found.core.cmp(&than.core) {
        Ordering::Equal => match (found.pre, than.pre) {
            (None, None) => Some(Ordering::Equal),
            (Some(_), None) => Some(Ordering::Less),
            (None, Some(_)) => Some(Ordering::Greater),
            (Some(a), Some(b)) => (a == b).then_some(Ordering::Equal),
        },
        order => Some(order),
    }
}

/// A version's parts that order it.
struct Release<'a> {
    core: [u64; 3],
    pre: Option<&'a str>,
}

impl<'a> Release<'a> {
    fn parse(version: &'a str) -> Option<Self> {
        let version = version.split('+').next()?;
        let (core, pre) = match version.split_once('-') {
            Some((core, pre)) => (core, Some(pre)),
            None => (version, None),
        };
        let mut parts = core.split('.').map(|part| part.parse::<u64>().ok());
        let mut next = || parts.next().flatten();
        Some(Self {
            core: [next()?, next()?, next()?],
            pre,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering::{Equal, Greater, Less};

    use super::compare;
    use crate::clis::BUILTINS;

    #[test]
    fn releases_are_ordered_by_their_numbers_then_a_pre_release_before_its_release() {
        let cases = [
            ("2.1.332", "2.1.197", Some(Greater)),
            ("2.1.197", "2.1.332", Some(Less)),
            ("0.171.0", "0.171.0", Some(Equal)),
            ("1.10.0", "1.9.9", Some(Greater)),
            ("0.172.0-alpha.1", "0.171.0", Some(Greater)),
            ("0.171.0-alpha.1", "0.171.0", Some(Less)),
            ("0.171.0", "0.171.0-alpha.1", Some(Greater)),
            ("0.171.0+build.7", "0.171.0", Some(Equal)),
            ("0.171.0-alpha.1", "0.171.0-alpha.2", None),
            ("0.171", "0.171.0", None),
            ("x.1.2", "0.171.0", None),
        ];
        for (found, than, order) in cases {
            assert_eq!(compare(found, than), order, "{found} against {than}");
        }
    }

    #[test]
    fn versions_are_read_from_each_clis_own_format() {
        let outputs = [
            ("codex", "codex-cli 0.171.0\n", Some("0.171.0")),
            (
                "codex",
                "codex-cli 0.172.0-alpha.3\n",
                Some("0.172.0-alpha.3"),
            ),
            ("claude", "2.1.332 (Claude Code)\n", Some("2.1.332")),
            ("gemini", "0.61.0\n", Some("0.61.0")),
            ("opencode", "v1.18.33", Some("1.18.33")),
            (
                "copilot",
                "GitHub Copilot CLI 1.0.102.\nRun 'copilot update' to check for updates.\n",
                Some("1.0.102"),
            ),
            ("qwen", "no version here 1.2", None),
        ];
        for (name, output, version) in outputs {
            let cli = BUILTINS.iter().find(|cli| cli.name() == name).unwrap();
            assert_eq!(cli.version_from(output).as_deref(), version, "{name}");
        }
    }
}

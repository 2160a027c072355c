//! Reading a CLI's version from what its `--version` printed, so `doctor` can tell a verified
//! install from one whose output the parsers were never checked against. Each CLI words it
//! differently: `codex-cli 0.171.0`, `2.1.332 (Claude Code)`, `0.61.0`.

/// The words of `--version` output: split at white space and parentheses.
pub fn words(output: &str) -> impl Iterator<Item = &str> {
    output.split(|c: char| c.is_whitespace() || c == '(' || c == ')')
}

/// The first word that reads `X.Y.Z` (a leading `v` dropped; more parts may follow).
pub fn first_version<'a>(mut words: impl Iterator<Item = &'a str>) -> Option<String> {
    words
        .find_map(|word| {
            let word = word.trim_start_matches('v');
            let parts: Vec<&str> = word.split('.').collect();
            let numbered = parts.len() >= 3
                && parts[..3]
                    .iter()
                    .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
            numbered.then_some(word)
        })
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use crate::clis::BUILTINS;

    #[test]
    fn versions_are_read_from_each_clis_own_format() {
        let outputs = [
            ("codex", "codex-cli 0.171.0\n", Some("0.171.0")),
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

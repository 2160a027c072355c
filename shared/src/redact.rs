//! Masking API keys and tokens in text that leaves the engine: stderr tails, error messages,
//! warnings, progress lines and logs. A CLI that prints its key (a failed request echoing its
//! headers, a debug dump of its environment) must not have it copied into a tool result that
//! goes to a model, or into a log file.
//!
//! A masked secret keeps what tells a person which key it was, the kind and its first few
//! characters: `sk-ant-api03-AbCd…[redacted]`, `OPENAI_API_KEY=sk-p…[redacted]`. Masking is
//! idempotent (what it leaves is too short to match again), so text may pass through it at
//! several exits. Recognised shapes are listed in `RULES`; the `regex` crate does the
//! matching because it is linear-time on any input and already in the tree through
//! `tracing-subscriber`.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex, RegexSet};

/// What a masked secret ends with.
pub const MARK: &str = "…[redacted]";

/// One shape of secret: `keep` is shown as it is, `secret` is cut to a few characters.
struct Rule {
    pattern: &'static str,
    /// Random keys contain letters and digits; a word that merely starts like a key does not.
    needs_letters_and_digits: bool,
}

/// Applied in order: Anthropic's `sk-ant-` before OpenAI's `sk-`, and header and assignment
/// values (which may be keys of a known shape) after the shapes. A key shape must not follow a
/// letter or digit, but may follow `_` (`KEY_sk-…` in a prompt or a file name); text a pattern
/// matches around `keep` and `secret` is kept as it is.
const RULES: &[Rule] = &[
    // Anthropic: sk-ant-api03-…, sk-ant-oat01-…
    key(r"(?:^|[^A-Za-z0-9])(?P<keep>sk-ant-(?:[a-z]+[0-9]*-)?)(?P<secret>[A-Za-z0-9_-]{20,})"),
    // OpenAI: sk-…, sk-proj-…, sk-svcacct-…, sk-admin-…
    key(r"(?:^|[^A-Za-z0-9])(?P<keep>sk-(?:proj-|svcacct-|admin-)?)(?P<secret>[A-Za-z0-9_-]{20,})"),
    // Google API keys.
    key(r"(?:^|[^A-Za-z0-9])(?P<keep>AIza)(?P<secret>[0-9A-Za-z_-]{30,})"),
    // GitHub: personal, OAuth, user-to-server, server-to-server and refresh tokens.
    key(r"(?:^|[^A-Za-z0-9])(?P<keep>gh[pousr]_)(?P<secret>[A-Za-z0-9]{30,})"),
    key(r"(?:^|[^A-Za-z0-9])(?P<keep>github_pat_)(?P<secret>[A-Za-z0-9_]{22,})"),
    // AWS access key ids (long-term and temporary).
    key(r"(?:^|[^A-Za-z0-9])(?P<keep>A(?:KIA|SIA))(?P<secret>[A-Z0-9]{16})(?:$|[^A-Za-z0-9])"),
    // Values are printable ASCII but quotes, `,` and `;`: keys are ASCII, so the `…` of a mask
    // ends one, and ASCII-only (`-u`) patterns keep the regex on its fast engines.
    // Authorization and Proxy-Authorization values, with or without a scheme.
    value(
        r#"(?i-u)\b(?P<keep>(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|negotiate|bot)\s+)?)(?P<secret>[\x21\x23-\x26\x28-\x2B\x2D-\x3A\x3C-\x7E]{8,})"#,
    ),
    // A bearer token on its own.
    value(r"(?i-u)\b(?P<keep>bearer\s+)(?P<secret>[A-Za-z0-9._~+/=-]{16,})"),
    // NAME=value and "name": "value" where the name ends in API_KEY, TOKEN, SECRET, … (this
    // covers x-api-key headers and AWS_SECRET_ACCESS_KEY too).
    value(
        r#"(?i-u)\b(?P<keep>(?:[A-Za-z0-9_.-]*[_.-])?(?:api[_-]?key|apikey|token|secret|secret[_-]?key|secret[_-]?access[_-]?key|access[_-]?key[_-]?secret|password|passwd)["']?\s*[:=]\s*["']?)(?P<secret>[\x21\x23-\x26\x28-\x2B\x2D-\x3A\x3C-\x7E]{8,})"#,
    ),
];

const fn key(pattern: &'static str) -> Rule {
    Rule {
        pattern,
        needs_letters_and_digits: true,
    }
}

const fn value(pattern: &'static str) -> Rule {
    Rule {
        pattern,
        needs_letters_and_digits: false,
    }
}

/// Whether any rule matches: all that text without a secret (nearly all text) needs. The
/// patterns are constants: a failure to compile is a bug that every test catches.
#[allow(
    clippy::expect_used,
    reason = "constant patterns, compiled by every test that redacts"
)]
static ANY: LazyLock<RegexSet> = LazyLock::new(|| {
    RegexSet::new(RULES.iter().map(|rule| rule.pattern)).expect("the redaction patterns compile")
});

/// Each rule on its own, to mask what [`ANY`] found; built at the first secret, as building
/// them costs as much as building [`ANY`].
#[allow(
    clippy::expect_used,
    reason = "constant patterns, compiled by every test that redacts"
)]
static EACH: LazyLock<Vec<(Regex, bool)>> = LazyLock::new(|| {
    RULES
        .iter()
        .map(|rule| {
            let regex = Regex::new(rule.pattern).expect("a redaction pattern compiles");
            (regex, rule.needs_letters_and_digits)
        })
        .collect()
});

/// `text` with every recognised secret masked; borrowed when there was none.
pub fn redact(text: &str) -> Cow<'_, str> {
    let hits = ANY.matches(text);
    if !hits.matched_any() {
        return Cow::Borrowed(text);
    }
    let mut text = Cow::Borrowed(text);
    for index in hits.iter() {
        let (regex, needs_letters_and_digits) = &EACH[index];
        let haystack: &str = &text;
        let masked = regex.replace_all(haystack, |caps: &Captures| {
            // A value an earlier rule already masked (`Bearer sk-proj-4fGh…[redacted]`).
            let after = caps.name("secret").map_or(0, |secret| secret.end());
            if haystack[after..].starts_with(MARK) {
                return caps[0].to_owned();
            }
            mask(caps, *needs_letters_and_digits)
        });
        if let Cow::Owned(masked) = masked {
            text = Cow::Owned(masked);
        }
    }
    text
}

/// Mask `text` in place.
pub fn redact_in_place(text: &mut String) {
    if let Cow::Owned(masked) = redact(text) {
        *text = masked;
    }
}

fn mask(caps: &Captures, needs_letters_and_digits: bool) -> String {
    let (Some(whole), Some(keep), Some(secret)) =
        (caps.get(0), caps.name("keep"), caps.name("secret"))
    else {
        return caps[0].to_owned();
    };
    let random = secret.as_str().bytes().any(|b| b.is_ascii_digit())
        && secret.as_str().bytes().any(|b| b.is_ascii_alphabetic());
    if needs_letters_and_digits && !random {
        return whole.as_str().to_owned();
    }
    let text = whole.as_str();
    let start = whole.start();
    let before = &text[..keep.start() - start];
    let after = &text[secret.end() - start..];
    // Four characters of a long secret, fewer of a short one: enough to tell keys apart.
    let shown = (secret.as_str().chars().count() / 4).min(4);
    let visible: String = secret.as_str().chars().take(shown).collect();
    format!("{before}{}{visible}{MARK}{after}", keep.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANTHROPIC: &str = "sk-ant-api03-Xq7dK2mN9pL4vR8sT1wY6zB3cF5gH0jAaBbCcDdEe";
    const OPENAI: &str = "sk-proj-4fGh7Jk9Lm2Np5Qr8St1Uv3Wx6Yz0AbCdEfGhIj";

    fn masked(text: &str) -> String {
        redact(text).into_owned()
    }

    #[test]
    fn each_key_shape_is_masked_keeping_its_kind_and_first_characters() {
        let cases = [
            (ANTHROPIC, "sk-ant-api03-Xq7d…[redacted]"),
            (OPENAI, "sk-proj-4fGh…[redacted]"),
            ("sk-4fGh7Jk9Lm2Np5Qr8St1Uv3Wx", "sk-4fGh…[redacted]"),
            (
                "AIzaSyD3xample0Key1ForGoogle2Maps3Api45",
                "AIzaSyD3…[redacted]",
            ),
            (
                "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
                "ghp_1a2B…[redacted]",
            ),
            (
                "gho_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
                "gho_1a2B…[redacted]",
            ),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
                "github_pat_11AB…[redacted]",
            ),
            ("AKIAIOSFODNN7EXAMPLE", "AKIAIOSF…[redacted]"),
            (
                "KEY_sk-ant-api03-Xq7dK2mN9pL4vR8sT1wY6zB3cF5gH0jA",
                "KEY_sk-ant-api03-Xq7d…[redacted]",
            ),
            ("ASIA4EXAMPLE7TEMPKEY", "ASIA4EXA…[redacted]"),
        ];
        for (secret, expected) in cases {
            let text = format!("error: the key {secret} was refused");
            assert_eq!(
                masked(&text),
                format!("error: the key {expected} was refused"),
                "{secret}"
            );
        }
    }

    #[test]
    fn headers_and_assignments_keep_their_name_and_mask_the_value() {
        let cases = [
            (
                "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature",
                "Authorization: Bearer eyJh…[redacted]",
            ),
            (
                "authorization: Basic dXNlcjpwYXNzd29yZA==",
                "authorization: Basic dXNl…[redacted]",
            ),
            (
                r#"{"Authorization":"token 0123456789abcdef"}"#,
                r#"{"Authorization":"token 0123…[redacted]"}"#,
            ),
            (
                "x-api-key: abcdef0123456789abcdef",
                "x-api-key: abcd…[redacted]",
            ),
            (
                "MY_SERVICE_API_KEY=hunter2hunter2",
                "MY_SERVICE_API_KEY=hun…[redacted]",
            ),
            (
                "export SLACK_BOT_TOKEN='xoxb-1234-5678-abcdefgh'",
                "export SLACK_BOT_TOKEN='xoxb…[redacted]'",
            ),
            (
                "CLIENT_SECRET=0123456789abcdef0123",
                "CLIENT_SECRET=0123…[redacted]",
            ),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws_secret_access_key = wJal…[redacted]",
            ),
            (
                r#""access_token": "ya29.a0AfH6SMBx-long-token""#,
                r#""access_token": "ya29…[redacted]""#,
            ),
            (
                "proxy said: Bearer abcdefghijklmnop0123",
                "proxy said: Bearer abcd…[redacted]",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(masked(text), expected, "{text}");
        }
    }

    #[test]
    fn a_key_in_an_assignment_is_masked_once() {
        let text = format!("OPENAI_API_KEY={OPENAI} ANTHROPIC_API_KEY=\"{ANTHROPIC}\"");
        assert_eq!(
            masked(&text),
            "OPENAI_API_KEY=sk-proj-4fGh…[redacted] \
             ANTHROPIC_API_KEY=\"sk-ant-api03-Xq7d…[redacted]\""
        );
    }

    #[test]
    fn masking_is_idempotent() {
        let text = format!(
            "Authorization: Bearer {OPENAI}\nGITHUB_TOKEN=ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
        );
        let once = masked(&text);
        assert_eq!(masked(&once), once);
        assert!(!once.contains("4fGh7Jk9"), "{once}");
    }

    #[test]
    fn near_misses_are_left_alone() {
        let untouched = [
            "commit 3f1c2a9b8e7d6c5b4a39281706f5e4d3c2b1a098 fixed it",
            "session 0199a8b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b started",
            "ses_4fGh7Jk9Lm2Np5Qr8St1Uv3Wx6",
            "use sk-learn for this; the task-ant-colony-optimisation-module runs",
            "sk-this-is-just-a-long-kebab-case-identifier",
            "max_tokens=8192 input_tokens: 1234567890 token_count=123456789",
            "the token: expired, the secret: short",
            "the bearer of bad news said authorization: denied",
            "AKIAlowercase0000000 and GHP_not_a_token and ghp_short",
            "Tokenizer=wordpiece-based-tokenizer",
            "The API key was rejected (401 Unauthorized): check OPENAI_API_KEY",
            "",
        ];
        for text in untouched {
            assert_eq!(masked(text), text);
        }
    }

    #[test]
    fn text_without_secrets_is_not_copied() {
        assert!(matches!(
            redact("codex: running `cargo test`"),
            Cow::Borrowed(_)
        ));
    }
}

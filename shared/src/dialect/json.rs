//! Reading one JSONL line into typed structs, shared by every dialect parser.
//!
//! A line is read in two passes: its `type` (usually the first key, so a prefix check finds it
//! without a parse), then the struct for that type, straight from the text. This avoids
//! buffering every line in an internally tagged enum.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, Visitor};
use serde_json::error::Category;

use crate::dialect::LineIssue;

/// A known event with no field the outcome needs.
#[derive(Deserialize)]
pub(crate) struct Empty {}

#[derive(Deserialize)]
struct Head<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
}

/// The `type` of a line; `None` for a blank line.
pub(crate) fn event_type(line: &str) -> Result<Option<Cow<'_, str>>, LineIssue> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    if let Some(rest) = line.strip_prefix("{\"type\":\"") {
        // The fast path only covers names without escapes; the next pass checks the rest.
        if let Some(end) = memchr::memchr2(b'"', b'\\', rest.as_bytes())
            .filter(|&end| rest.as_bytes()[end] == b'"')
        {
            return Ok(Some(Cow::Borrowed(&rest[..end])));
        }
    }
    // A struct also deserializes from a JSON array: rule that out first.
    if !line.starts_with('{') {
        return Err(LineIssue::NotJson);
    }
    match serde_json::from_str::<Head>(line) {
        Ok(head) => Ok(Some(head.kind)),
        Err(error) => Err(issue(&error, "")),
    }
}

/// The fields of a line whose type is `kind`.
pub(crate) fn fields<'a, T: Deserialize<'a>>(line: &'a str, kind: &str) -> Result<T, LineIssue> {
    serde_json::from_str(line).map_err(|error| issue(&error, kind))
}

/// The issue with a line of a type the dialect does not know.
pub(crate) fn unknown(line: &str, kind: &str) -> LineIssue {
    match serde_json::from_str::<IgnoredAny>(line) {
        Ok(_) => LineIssue::UnknownType(kind.to_owned()),
        Err(_) => LineIssue::NotJson,
    }
}

fn issue(error: &serde_json::Error, kind: &str) -> LineIssue {
    match error.classify() {
        Category::Data => LineIssue::Malformed {
            event_type: kind.to_owned(),
            reason: error.to_string(),
        },
        Category::Io | Category::Syntax | Category::Eof => LineIssue::NotJson,
    }
}

/// Checks the loosely read fields of an object of type `kind`, so that a field of the wrong
/// type makes the line malformed, as a typed struct would.
pub(crate) struct Fields<'k> {
    pub kind: &'k str,
}

impl Fields<'_> {
    pub fn required<'a>(
        &self,
        name: &str,
        value: Option<Scalar<'a>>,
    ) -> Result<Cow<'a, str>, LineIssue> {
        self.optional(name, value)?
            .ok_or_else(|| self.malformed(format!("missing field `{name}`")))
    }

    pub fn optional<'a>(
        &self,
        name: &str,
        value: Option<Scalar<'a>>,
    ) -> Result<Option<Cow<'a, str>>, LineIssue> {
        match value {
            None => Ok(None),
            Some(Scalar::Str(text)) => Ok(Some(text)),
            Some(_) => Err(self.malformed(format!("`{name}` is not a string"))),
        }
    }

    pub fn optional_int(
        &self,
        name: &str,
        value: Option<Scalar>,
    ) -> Result<Option<i64>, LineIssue> {
        match value {
            None => Ok(None),
            Some(Scalar::Int(n)) => Ok(Some(n)),
            Some(_) => Err(self.malformed(format!("`{name}` is not a 64-bit integer"))),
        }
    }

    #[cold]
    fn malformed(&self, reason: String) -> LineIssue {
        LineIssue::Malformed {
            event_type: self.kind.to_owned(),
            reason,
        }
    }
}

/// Any JSON value, reduced to the scalar it holds. For fields that are not essential, so a
/// CLI changing their shape costs the field, not the line. A string without escapes is
/// borrowed from the line: only the fields an event keeps are copied.
#[cfg_attr(test, derive(Debug))]
pub(crate) enum Scalar<'a> {
    Str(Cow<'a, str>),
    Int(i64),
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Str(Cow::Owned(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Int(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar<'de>, E> {
        Ok(i64::try_from(v).map_or(Scalar::Other, Scalar::Int))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Other)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Other)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Other)
    }

    fn visit_none<E: de::Error>(self) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Other)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Scalar<'de>, D::Error> {
        Scalar::deserialize(deserializer)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Scalar<'de>, A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| Scalar::Other)
    }

    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Scalar<'de>, A::Error> {
        IgnoredAny.visit_map(map).map(|_| Scalar::Other)
    }
}

impl Scalar<'_> {
    pub fn into_string(self) -> Option<String> {
        match self {
            Self::Str(s) => Some(s.into_owned()),
            Self::Int(_) | Self::Other => None,
        }
    }
}

/// `#[serde(default, deserialize_with = "loose_string")]`: the value if it is a string.
pub(crate) fn loose_string<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    Scalar::deserialize(deserializer).map(Scalar::into_string)
}

/// `#[serde(default, deserialize_with = "loose_int")]`: the value if it is an integer.
pub(crate) fn loose_int<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<i64>, D::Error> {
    Scalar::deserialize(deserializer).map(|scalar| match scalar {
        Scalar::Int(n) => Some(n),
        Scalar::Str(_) | Scalar::Other => None,
    })
}

/// `#[serde(default, deserialize_with = "loose_http_status")]`: an HTTP status, given as a
/// number or a string.
pub(crate) fn loose_http_status<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u16>, D::Error> {
    let status = match Scalar::deserialize(deserializer)? {
        Scalar::Int(n) => u16::try_from(n).ok(),
        Scalar::Str(s) => s.trim().parse().ok(),
        Scalar::Other => None,
    };
    Ok(status.filter(|code| (100..=599).contains(code)))
}

/// Adds token counts read from a line: saturating, so absurd values cannot panic.
pub(crate) fn sum(counts: &[u64]) -> u64 {
    counts
        .iter()
        .fold(0, |total, &count| total.saturating_add(count))
}

/// Every prefix of every line of `stream` through `dialect`, for tests that no cut line
/// panics.
#[cfg(test)]
pub(crate) fn parse_every_prefix(dialect: &mut dyn super::Dialect, stream: &str) {
    let mut events = Vec::new();
    for line in stream.lines() {
        for end in (0..=line.len()).filter(|&end| line.is_char_boundary(end)) {
            let _ = dialect.parse_line(&line[..end], &mut events);
            events.clear();
        }
    }
}

/// Every line of `stream` through `dialect`: the events, and the issues of the lines
/// that gave none.
#[cfg(test)]
pub(crate) fn parse_all(
    dialect: &mut dyn super::Dialect,
    stream: &str,
) -> (Vec<crate::event::AgentEvent>, Vec<LineIssue>) {
    let mut events = Vec::new();
    let mut issues = Vec::new();
    for line in stream.lines() {
        if let Err(issue) = dialect.parse_line(line, &mut events) {
            issues.push(issue);
        }
    }
    (events, issues)
}

/// The terminal events of a parsed stream.
#[cfg(test)]
pub(crate) fn terminal(events: &[crate::event::AgentEvent]) -> Vec<&crate::event::AgentEvent> {
    events.iter().filter(|event| event.is_terminal()).collect()
}

/// Each `(line, type)` gives no event and one `Malformed` issue naming that type.
#[cfg(test)]
pub(crate) fn assert_each_malformed<D: super::Dialect + Default>(lines: &[(&str, &str)]) {
    for (line, kind) in lines {
        let (events, issues) = parse_all(&mut D::default(), line);
        assert!(events.is_empty(), "{line}");
        assert!(
            matches!(&issues[..], [LineIssue::Malformed { event_type, .. }] if event_type == kind),
            "{line}: {issues:?}"
        );
    }
}

/// The latest usage a parsed stream reported.
#[cfg(test)]
pub(crate) fn last_usage(events: &[crate::event::AgentEvent]) -> Option<crate::event::Usage> {
    events.iter().rev().find_map(|event| match event {
        crate::event::AgentEvent::Usage(usage) => Some(*usage),
        _ => None,
    })
}

/// The texts among `events`, in order.
#[cfg(test)]
pub(crate) fn texts(events: &[crate::event::AgentEvent]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|event| match event {
            crate::event::AgentEvent::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

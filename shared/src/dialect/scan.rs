//! A fast path for the common shape of a line: objects whose values are plain strings,
//! integers, `null` or booleans. It reads such a line in one pass and borrows every string;
//! it gives up (`None`) on anything else (escapes in a string it returns, floats, nesting it
//! was not asked to enter, bad JSON), and the caller then reads the line with serde, so the
//! outcome of a line never depends on which path read it.
//!
//! Where a string ends is found by [`crate::json_string::first_special`], sixteen bytes at a
//! time.

use crate::json_string::first_special;

/// A value of a flat object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flat<'a> {
    /// A string without escapes, as it appears between its quotes.
    Str(&'a str),
    /// An integer that fits in an `i64`.
    Int(i64),
    Null,
    Bool,
    /// A string with escapes, whose content the fast path does not decode.
    Escaped,
}

/// A cursor over one line.
pub(crate) struct Scanner<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Scanner<'a> {
    pub fn new(text: &'a str) -> Self {
        Self { text, at: 0 }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    #[inline(always)]
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes().get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte after any whitespace, consumed.
    #[inline(always)]
    fn take(&mut self) -> Option<u8> {
        self.skip_space();
        let byte = *self.bytes().get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.bytes().get(self.at).copied()
    }

    /// Enter an object: consumes its `{`.
    pub fn open(&mut self) -> Option<()> {
        (self.take()? == b'{').then_some(())
    }

    /// The next key of the object entered, with its `:` consumed; `Ok(None)` after its
    /// closing `}`. `first` says whether no key was read yet.
    pub fn key(&mut self, first: bool) -> Option<Option<&'a str>> {
        match self.take()? {
            b'}' => return Some(None),
            b',' if !first => (self.take()? == b'"').then_some(())?,
            b'"' if first => {}
            _ => return None,
        }
        let Flat::Str(key) = self.string()? else {
            return None;
        };
        (self.take()? == b':').then_some(Some(key))
    }

    /// A flat value; `None` for an object, an array, a float or bad JSON.
    pub fn value(&mut self) -> Option<Flat<'a>> {
        match self.take()? {
            b'"' => self.string(),
            b'n' => self.word("ull", Flat::Null),
            b't' => self.word("rue", Flat::Bool),
            b'f' => self.word("alse", Flat::Bool),
            b'-' | b'0'..=b'9' => {
                self.at -= 1;
                self.integer()
            }
            _ => None,
        }
    }

    /// Consumes `literal` if the text goes on with exactly it (no whitespace skipped).
    pub fn expect(&mut self, literal: &str) -> bool {
        let matches = self.bytes()[self.at..].starts_with(literal.as_bytes());
        if matches {
            self.at += literal.len();
        }
        matches
    }

    /// The rest of a string whose opening quote was consumed, if it has no escapes.
    pub fn plain_string(&mut self) -> Option<&'a str> {
        match self.string()? {
            Flat::Str(text) => Some(text),
            _ => None,
        }
    }

    /// The rest of a string whose opening quote was consumed, with or without escapes.
    pub fn skip_string(&mut self) -> Option<()> {
        self.string().map(drop)
    }

    /// Whether only whitespace is left.
    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    fn word(&mut self, rest: &str, value: Flat<'a>) -> Option<Flat<'a>> {
        let tail = self.text.get(self.at..)?;
        tail.starts_with(rest).then(|| {
            self.at += rest.len();
            value
        })
    }

    /// The rest of a string whose opening quote was consumed. Escapes are checked as JSON
    /// requires, but not decoded; `\u` and control characters give up. Inlined: most strings
    /// end at the first special byte, and a call would cost as much as the scan.
    #[inline(always)]
    fn string(&mut self) -> Option<Flat<'a>> {
        let start = self.at;
        let stop = self.next_special()?;
        if self.bytes()[stop] == b'"' {
            self.at = stop + 1;
            return Some(Flat::Str(self.text.get(start..stop)?));
        }
        self.escaped_string(stop)
    }

    /// The rest of a string from its first special byte at `stop`, when that is not its end.
    fn escaped_string(&mut self, mut stop: usize) -> Option<Flat<'a>> {
        loop {
            match self.bytes()[stop] {
                b'"' => {
                    self.at = stop + 1;
                    return Some(Flat::Escaped);
                }
                b'\\' => match self.bytes().get(stop + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                        self.at = stop + 2;
                    }
                    _ => return None,
                },
                _ => return None,
            }
            stop = self.next_special()?;
        }
    }

    /// Where the first special byte at or after the cursor is.
    #[inline(always)]
    fn next_special(&self) -> Option<usize> {
        first_special(self.bytes(), self.at)
    }

    /// An integer of at most 18 digits (so it fits an `i64`), without a fraction or exponent.
    fn integer(&mut self) -> Option<Flat<'a>> {
        let start = self.at;
        if self.bytes().get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        let digits = self.bytes()[self.at..]
            .iter()
            .take_while(|byte| byte.is_ascii_digit())
            .count();
        let leading_zero = digits > 1 && self.bytes()[self.at] == b'0';
        self.at += digits;
        let fraction = matches!(self.bytes().get(self.at), Some(b'.' | b'e' | b'E'));
        if digits == 0 || digits > 18 || leading_zero || fraction {
            return None;
        }
        self.text[start..self.at].parse().ok().map(Flat::Int)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field of a flat object, or `None` where the fast path gives up.
    fn fields(text: &str) -> Option<Vec<(&str, Flat<'_>)>> {
        let mut scanner = Scanner::new(text);
        scanner.open()?;
        let mut fields = Vec::new();
        while let Some(key) = scanner.key(fields.is_empty())? {
            fields.push((key, scanner.value()?));
        }
        scanner.at_end().then_some(fields)
    }

    #[test]
    fn flat_values_are_read_and_strings_borrowed() {
        let text = r#" { "a" : "x y", "b":-12,"c":null ,"d":true,"e":false,"f":"1\n\"2\""} "#;
        let expected = vec![
            ("a", Flat::Str("x y")),
            ("b", Flat::Int(-12)),
            ("c", Flat::Null),
            ("d", Flat::Bool),
            ("e", Flat::Bool),
            ("f", Flat::Escaped),
        ];
        assert_eq!(fields(text), Some(expected));
        assert_eq!(fields("{}"), Some(vec![]));
    }

    /// Strings end where they do whatever their length and place: in the first chunk, in a
    /// later one, or in the bytes after the last whole chunk.
    #[test]
    fn strings_are_read_across_chunks() {
        for (before, len) in (0..70).flat_map(|before| [0, 1, 15, 16, 17, 40].map(|len| (before, len))) {
            let key = "k".repeat(before);
            let value = "v".repeat(len);
            let text = format!("{{\"{key}\":\"{value}\",\"b\":\"x\\ny\"}}");
            let fields = fields(&text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(fields[0].0, key);
            assert_eq!(fields[0].1, Flat::Str(&value));
            assert_eq!(fields[1], ("b", Flat::Escaped));
        }
    }

    #[test]
    fn anything_unusual_gives_up() {
        for text in [
            r#"{"a":1.5}"#,
            r#"{"a":1e3}"#,
            r#"{"a":01}"#,
            r#"{"a":1234567890123456789}"#,
            r#"{"a":"\u0041"}"#,
            r#"{"a":"\q"}"#,
            "{\"a\":\"tab\there\"}",
            r#"{"a":[1]}"#,
            r#"{"a":{}}"#,
            r#"{"a":nul}"#,
            r#"{"a":1,}"#,
            r#"{,"a":1}"#,
            r#"{"a" 1}"#,
            r#"{"a":1} x"#,
            r#"{"a":1"#,
            r#"{"a":"x"#,
            r#"{"\n":1}"#,
            "[]",
            "",
        ] {
            assert_eq!(fields(text), None, "{text}");
        }
    }
}

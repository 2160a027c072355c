//! A fast path for the common shape of a line: objects whose values are plain strings,
//! integers, `null` or booleans. It reads such a line in one pass and borrows every string;
//! it gives up (`None`) on anything else (escapes in a string it returns, floats, nesting it
//! was not asked to enter, bad JSON), and the caller then reads the line with serde, so the
//! outcome of a line never depends on which path read it.

/// A value of a flat object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Flat<'a> {
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
pub(super) struct Scanner<'a> {
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

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes().get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte after any whitespace, consumed.
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
            b',' if !first => {}
            b'"' if first => self.at -= 1,
            _ => return None,
        }
        if self.take()? != b'"' {
            return None;
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
    /// requires, but not decoded; `\u` and control characters give up.
    fn string(&mut self) -> Option<Flat<'a>> {
        let start = self.at;
        let mut escaped = false;
        loop {
            let rest = &self.bytes()[self.at..];
            let stop = first_special(rest)?;
            self.at += stop + 1;
            match rest[stop] {
                b'"' => break,
                b'\\' => match rest.get(stop + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                        escaped = true;
                        self.at += 1;
                    }
                    _ => return None,
                },
                _ => return None,
            }
        }
        Some(if escaped {
            Flat::Escaped
        } else {
            Flat::Str(&self.text[start..self.at - 1])
        })
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

/// Where the first quote, backslash or control character of `bytes` is. Eight bytes at a
/// time: the strings are short, and a vectorised search costs more to set up than it saves.
fn first_special(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Bytes of `word` below `n`: the lowest flagged byte is exact (a borrow only flags bytes
    // above a real match).
    let below = |word: u64, n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGH;
    let chunks = bytes.chunks_exact(8);
    let tail = chunks.remainder();
    for (index, chunk) in chunks.enumerate() {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        let found = below(quote, 1) | below(backslash, 1) | below(word, 0x20);
        if found != 0 {
            return Some(index * 8 + found.trailing_zeros() as usize / 8);
        }
    }
    let at = bytes.len() - tail.len();
    tail.iter()
        .position(|&byte| byte == b'"' || byte == b'\\' || byte < 0x20)
        .map(|offset| at + offset)
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

    #[test]
    fn special_bytes_are_found_wherever_they_are() {
        for special in [b'"', b'\\', b'\n', 0x00, 0x1f] {
            for at in 0..20 {
                let mut bytes = "é".repeat(10).into_bytes();
                bytes.truncate(20);
                bytes[at] = special;
                assert_eq!(first_special(&bytes), Some(at), "{special} at {at}");
            }
        }
        assert_eq!(first_special("no stops here, ~ é \x7f".as_bytes()), None);
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

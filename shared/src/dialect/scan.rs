//! A fast path for the common shape of a line: objects whose values are plain strings,
//! integers, `null` or booleans. It reads such a line in one pass and borrows every string;
//! it gives up (`None`) on anything else (escapes in a string it returns, floats, nesting it
//! was not asked to enter, bad JSON), and the caller then reads the line with serde, so the
//! outcome of a line never depends on which path read it.
//!
//! Where strings end is found from a bitmap of the line's quotes, backslashes and control
//! characters, made 64 bytes at a time as the cursor gets there: a line of ten short strings
//! is then read in two passes of word arithmetic, not one search per string.

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
    /// Where the block of `specials` starts: a multiple of 64, or `usize::MAX` before the first.
    block: usize,
    /// The special bytes (see [`specials`]) of the 64 bytes from `block`, one bit each.
    specials: u64,
}

impl<'a> Scanner<'a> {
    pub fn new(text: &'a str) -> Self {
        Self {
            text,
            at: 0,
            block: usize::MAX,
            specials: 0,
        }
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
    fn next_special(&mut self) -> Option<usize> {
        let mut from = self.at;
        loop {
            if from >= self.text.len() {
                return None;
            }
            let block = from & !63;
            if block != self.block {
                self.block = block;
                self.specials = block_specials(&self.bytes()[block..]);
            }
            let ahead = self.specials >> (from - block);
            if ahead != 0 {
                return Some(from + ahead.trailing_zeros() as usize);
            }
            from = block + 64;
        }
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

/// The special bytes among the first 64 of `bytes` (fewer at its end), bit `i` for byte
/// `i`: the quotes, backslashes and control characters, where a string's scan stops.
/// Kept out of line, so that the scan of each string stays small.
#[inline(never)]
fn block_specials(bytes: &[u8]) -> u64 {
    if let Some(block) = bytes.first_chunk::<64>() {
        return specials_of(block);
    }
    let mut block = [b' '; 64];
    block[..bytes.len()].copy_from_slice(bytes);
    specials_of(&block)
}

/// Sixteen bytes at a time, with the compare and move-mask instructions every x86_64 has.
#[cfg(target_arch = "x86_64")]
fn specials_of(block: &[u8; 64]) -> u64 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let mut mask = 0;
    for (index, chunk) in block.chunks_exact(16).enumerate() {
        // SAFETY: SSE2 is part of the x86_64 baseline, so these instructions always exist;
        // the load reads the 16 bytes of `chunk` and needs no alignment.
        let bits = unsafe {
            let bytes = _mm_loadu_si128(chunk.as_ptr().cast());
            let quote = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\' as i8));
            // Below 0x20 exactly when the smaller of it and 0x1f is itself.
            let control = _mm_cmpeq_epi8(_mm_min_epu8(bytes, _mm_set1_epi8(0x1f)), bytes);
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control))
        };
        // The mask has 16 bits: the sign-extension of `as` is cut off by the u16.
        mask |= u64::from(bits as u16) << (index * 16);
    }
    mask
}

/// Eight bytes at a time, in plain word arithmetic, on other processors.
#[cfg(not(target_arch = "x86_64"))]
fn specials_of(block: &[u8; 64]) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // The high bit of each byte of `x` that is zero; exact, as no carry crosses a byte.
    let zero = |x: u64| !((x & LOW7).wrapping_add(LOW7) | x | LOW7);
    let mut mask = 0;
    for (index, chunk) in block.chunks_exact(8).enumerate() {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let quote = zero(word ^ (ONES * u64::from(b'"')));
        let backslash = zero(word ^ (ONES * u64::from(b'\\')));
        // Below 0x20 exactly when the top three bits are clear.
        let control = zero(word & (ONES * 0xe0));
        // One bit per byte, gathered into the top byte by one multiplication.
        let flags = ((quote | backslash | control) >> 7).wrapping_mul(0x0102_0408_1020_4080);
        mask |= (flags >> 56) << (index * 8);
    }
    mask
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

    /// Every byte value, alone and beside every other, at every place of a block and past
    /// its end, is flagged exactly when it is a quote, a backslash or a control character.
    #[test]
    fn special_bytes_are_flagged_exactly_wherever_they_are() {
        let special = |byte: u8| byte == b'"' || byte == b'\\' || byte < 0x20;
        for first in 0..=u8::MAX {
            for second in 0..=u8::MAX {
                let at = usize::from(first ^ second) % 63;
                let mut bytes = [b'a'; 70];
                bytes[at] = first;
                bytes[at + 1] = second;
                let expected = (0..64).fold(0u64, |mask, index| {
                    mask | (u64::from(special(bytes[index])) << index)
                });
                assert_eq!(block_specials(&bytes), expected, "{first} {second} at {at}");
                let short = &bytes[..at + 1];
                let expected = expected & ((1 << (at + 1)) - 1);
                assert_eq!(block_specials(short), expected, "{first} at the end, {at}");
            }
        }
    }

    #[test]
    fn strings_are_read_across_blocks() {
        for before in 0..130 {
            let key = "k".repeat(before);
            let text = format!("{{\"{key}\":\"{}\",\"b\":\"x\\ny\"}}", "v".repeat(70));
            let fields = fields(&text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(fields[0].0, key);
            assert_eq!(fields[0].1, Flat::Str(&"v".repeat(70)));
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

//! Where a JSON string's special bytes are: its quotes, backslashes and control characters,
//! which end a string's scan ([`crate::dialect::scan`]) and which writing one must escape
//! ([`crate::event_json`]). Found sixteen bytes at a time with a mask: most strings of an
//! event end within their first sixteen bytes, so a string costs one compare of a chunk, not
//! one per byte.

/// Where the first quote, backslash or control character of `bytes` at or after `from` is:
/// where a JSON string's scan stops, or where writing one must escape.
#[inline(always)]
pub(crate) fn first_special(bytes: &[u8], mut from: usize) -> Option<usize> {
    while let Some(chunk) = bytes.get(from..from + CHUNK).and_then(|c| c.first_chunk()) {
        let specials = specials_of(chunk);
        if specials != 0 {
            return Some(from + specials.trailing_zeros() as usize);
        }
        from += CHUNK;
    }
    let rest = bytes.get(from..)?;
    rest.iter().position(|&byte| is_special(byte)).map(|at| from + at)
}

/// The bytes [`specials_of`] looks at at once.
const CHUNK: usize = 16;

/// Where a string's scan stops: a quote, a backslash or a control character.
fn is_special(byte: u8) -> bool {
    byte == b'"' || byte == b'\\' || byte < 0x20
}

/// The special bytes of `chunk`, bit `i` for byte `i`, with the compare and move-mask
/// instructions every x86_64 has.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn specials_of(chunk: &[u8; CHUNK]) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of the x86_64 baseline, so these instructions always exist; the
    // load reads the 16 bytes of `chunk` and needs no alignment.
    let mask = unsafe {
        let bytes = _mm_loadu_si128(chunk.as_ptr().cast());
        let quote = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\' as i8));
        // Below 0x20 exactly when the smaller of it and 0x1f is itself.
        let control = _mm_cmpeq_epi8(_mm_min_epu8(bytes, _mm_set1_epi8(0x1f)), bytes);
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control))
    };
    // The mask has 16 bits: the sign-extension of `as` is cut off by the u16.
    u32::from(mask as u16)
}

/// On other processors, [`specials_of_words`].
#[cfg(not(target_arch = "x86_64"))]
fn specials_of(chunk: &[u8; CHUNK]) -> u32 {
    specials_of_words(chunk)
}

/// The special bytes of `chunk` eight at a time, in plain word arithmetic: for processors
/// without SSE2 (built for the tests everywhere, so x86_64 proves it too).
#[cfg(any(test, not(target_arch = "x86_64")))]
fn specials_of_words(chunk: &[u8; CHUNK]) -> u32 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // The high bit of each byte of `x` that is zero; exact, as no carry crosses a byte.
    let zero = |x: u64| !((x & LOW7).wrapping_add(LOW7) | x | LOW7);
    let mut mask = 0;
    for (index, half) in chunk.chunks_exact(8).enumerate() {
        let mut word = [0; 8];
        word.copy_from_slice(half);
        let word = u64::from_le_bytes(word);
        let quote = zero(word ^ (ONES * u64::from(b'"')));
        let backslash = zero(word ^ (ONES * u64::from(b'\\')));
        // Below 0x20 exactly when the top three bits are clear.
        let control = zero(word & (ONES * 0xe0));
        // One bit per byte, gathered into the top byte by one multiplication.
        let flags = ((quote | backslash | control) >> 7).wrapping_mul(0x0102_0408_1020_4080);
        mask |= ((flags >> 56) as u32) << (index * 8);
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte value, alone and beside every other, at every place of a chunk, is flagged
    /// exactly when it is a quote, a backslash or a control character.
    #[test]
    fn special_bytes_are_flagged_exactly_wherever_they_are() {
        for first in 0..=u8::MAX {
            for second in 0..=u8::MAX {
                let at = usize::from(first ^ second) % (CHUNK - 1);
                let mut chunk = [b'a'; CHUNK];
                chunk[at] = first;
                chunk[at + 1] = second;
                let expected = (0..CHUNK).fold(0u32, |mask, index| {
                    mask | (u32::from(is_special(chunk[index])) << index)
                });
                assert_eq!(specials_of(&chunk), expected, "{first} {second} at {at}");
                assert_eq!(specials_of_words(&chunk), expected, "{first} {second} at {at}");
            }
        }
        assert!(is_special(b'"') && is_special(b'\\') && is_special(0x1f));
        assert!(!is_special(b' ') && !is_special(0x7f) && !is_special(0xc3));
    }

    #[test]
    fn the_first_special_is_found_in_a_chunk_or_after_the_last_whole_one() {
        for len in 0..40 {
            for at in 0..len {
                let mut bytes = vec![b'a'; len];
                bytes[at] = b'"';
                assert_eq!(first_special(&bytes, 0), Some(at), "{len} {at}");
                assert_eq!(first_special(&bytes, at + 1), None, "{len} {at}");
            }
            assert_eq!(first_special(&vec![b'a'; len], 0), None);
        }
        assert_eq!(first_special(b"ab", 5), None);
    }
}

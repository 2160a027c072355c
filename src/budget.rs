//! Keeping long text within a budget: it keeps its head and tail, with a line in between saying
//! what was left out and where to find it.

use std::borrow::Cow;

/// `text` cut to at most `max` characters of its own (head and tail), with `note` (given the
/// number of characters left out and the offset of the first) in the gap.
pub fn head_and_tail<'a>(
    text: &'a str,
    max: usize,
    note: impl Fn(usize, usize) -> String,
) -> Cow<'a, str> {
    let total = text.chars().count();
    if total <= max {
        return Cow::Borrowed(text);
    }
    let head = max / 2;
    let tail = max - head;
    let omitted = total - head - tail;
    let head_end = byte_offset(text, head);
    let tail_start = start_of_last(text, tail);
    Cow::Owned(format!(
        "{}\n\n[{}]\n\n{}",
        &text[..head_end],
        note(omitted, head),
        &text[tail_start..]
    ))
}

/// The last `max` characters of `text`, marked as cut when they are not all of it.
pub fn tail(text: &str, max: usize) -> Cow<'_, str> {
    // Walked from the end: the text may be megabytes, the tail a few thousand characters.
    let start = start_of_last(text, max);
    if start == 0 {
        return Cow::Borrowed(text);
    }
    Cow::Owned(format!(
        "[… {} characters before]\n{}",
        text[..start].chars().count(),
        &text[start..]
    ))
}

/// Where the last `chars` characters of `text` start.
fn start_of_last(text: &str, chars: usize) -> usize {
    match chars.checked_sub(1) {
        None => text.len(),
        Some(before) => text
            .char_indices()
            .rev()
            .nth(before)
            .map_or(0, |(at, _)| at),
    }
}

fn byte_offset(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(at, _)| at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_within_the_budget_is_left_whole() {
        assert_eq!(head_and_tail("short", 5, |_, _| unreachable!()), "short");
        assert_eq!(tail("short", 10), "short");
    }

    #[test]
    fn long_text_keeps_head_and_tail_and_says_where_the_rest_starts() {
        let text = "é".repeat(10) + &"x".repeat(10);
        let cut = head_and_tail(&text, 6, |omitted, from| format!("{omitted} from {from}"));
        assert_eq!(cut, "ééé\n\n[14 from 3]\n\nxxx");
        assert_eq!(tail(&text, 3), "[… 17 characters before]\nxxx");
    }
}

//! Text that grows piece by piece but keeps at most a bound: its head and its newest tail,
//! counting the characters that fell out between. A run may reason for megabytes; its outcome
//! keeps what a reader uses, and the run's events have the rest.

/// At most `2 * half` bytes of text: the first `half` and the newest `half` (each cut at a
/// character boundary).
#[derive(Debug)]
pub struct HeadTail {
    head: String,
    tail: String,
    /// Characters dropped between head and tail.
    omitted: usize,
    half: usize,
}

impl HeadTail {
    pub fn new(max_bytes: usize) -> Self {
        Self {
            head: String::new(),
            tail: String::new(),
            omitted: 0,
            half: max_bytes / 2,
        }
    }

    pub fn push_str(&mut self, mut text: &str) {
        if self.tail.is_empty() && self.head.len() < self.half {
            let fits = floor_boundary(text, self.half - self.head.len());
            self.head.push_str(&text[..fits]);
            text = &text[fits..];
        }
        self.tail.push_str(text);
        // Trimmed once the tail holds twice what it keeps: each byte is moved at most once.
        if self.tail.len() > 2 * self.half.max(1) {
            self.trim_tail();
        }
    }

    /// The text kept, with `note(characters left out)` between head and tail if any were.
    pub fn finish(mut self, note: impl FnOnce(usize) -> String) -> String {
        self.trim_tail();
        if self.omitted == 0 {
            self.head.push_str(&self.tail);
            return self.head;
        }
        format!("{}\n\n[{}]\n\n{}", self.head, note(self.omitted), self.tail)
    }

    fn trim_tail(&mut self) {
        let excess = self.tail.len().saturating_sub(self.half);
        if excess == 0 {
            return;
        }
        let cut = ceil_boundary(&self.tail, excess);
        self.omitted += self.tail[..cut].chars().count();
        self.tail.drain(..cut);
    }
}

/// The largest character boundary of `text` at or below `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest character boundary of `text` at or above `at`.
fn ceil_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(max: usize, pieces: &[&str]) -> String {
        let mut text = HeadTail::new(max);
        for piece in pieces {
            text.push_str(piece);
        }
        text.finish(|omitted| format!("{omitted} left out"))
    }

    #[test]
    fn text_within_the_bound_is_kept_whole() {
        assert_eq!(kept(10, &["ab", "cd", "", "efghij"]), "abcdefghij");
        assert_eq!(kept(0, &[]), "");
    }

    #[test]
    fn long_text_keeps_its_head_and_newest_tail_and_counts_the_characters_between() {
        let pieces: Vec<String> = (0..1000).map(|n| format!("{n:04}")).collect();
        let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
        assert_eq!(kept(16, &pieces), "00000001\n\n[3984 left out]\n\n09980999");
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        // Three bytes each: a half of 4 bytes keeps one whole character at either end.
        let text = "€".repeat(10);
        assert_eq!(kept(8, &[&text]), "€\n\n[8 left out]\n\n€");
        assert_eq!(kept(8, &["a", &text, "b"]), "a€\n\n[8 left out]\n\n€b");
    }
}

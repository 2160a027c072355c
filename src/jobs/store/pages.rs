//! Reading a job's answer and events a page at a time.

use rusqlite::{OptionalExtension, params};

use super::id::JobId;
use super::record::TextPage;
use super::{Store, StoreError};

impl Store {
    /// Characters (Unicode scalar values, not bytes: pages of a JSON string must not split
    /// one), so concatenating the pages gives the answer byte for byte. An unfinished job's
    /// answer is empty; `None` for an unknown job.
    pub fn answer_page(
        &self,
        id: &JobId,
        offset: u64,
        limit: u64,
    ) -> Result<Option<TextPage>, StoreError> {
        // Cut here, not with SQLite's substr, which stops at a NUL character.
        let page = self
            .conn()
            .prepare_cached("SELECT answer FROM jobs WHERE id = ?1")
            .and_then(|mut select| {
                select
                    .query_row([id.as_str()], |row| {
                        let answer = row.get_ref(0)?.as_str_or_null()?.unwrap_or_default();
                        Ok(chars(answer, offset, limit.max(1)))
                    })
                    .optional()
            })
            .map_err(self.fail())?;
        Ok(page)
    }

    /// Events as JSON lines, paged by event index (`limit` lines); where the size cap dropped
    /// the middle, one line `{"type":"dropped","events":N,"bytes":M}` stands in the gap.
    pub fn transcript_page(
        &self,
        id: &JobId,
        offset: u64,
        limit: u64,
    ) -> Result<Option<TextPage>, StoreError> {
        let conn = self.conn();
        let counts: Option<(u64, u64, u64)> = conn
            .prepare_cached("SELECT events, dropped_events, dropped_bytes FROM jobs WHERE id = ?1")
            .and_then(|mut select| {
                select
                    .query_row([id.as_str()], |row| {
                        Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                    })
                    .optional()
            })
            .map_err(self.fail())?;
        let Some((kept, dropped_events, dropped_bytes)) = counts else {
            return Ok(None);
        };
        let total = kept + dropped_events;
        let mut lines = Lines {
            text: String::new(),
            cursor: offset,
            room: limit.max(1),
        };
        let mut select = conn
            .prepare_cached(
                "SELECT first_event, lines FROM chunks
                 WHERE job_id = ?1 AND first_event + events > ?2 ORDER BY first_event",
            )
            .map_err(self.fail())?;
        let mut chunks = select
            .query(params![id.as_str(), offset])
            .map_err(self.fail())?;
        while lines.room > 0 {
            let Some(chunk) = chunks.next().map_err(self.fail())? else {
                break;
            };
            let first: u64 = chunk.get(0).map_err(self.fail())?;
            if first > lines.cursor {
                lines.gap(first, dropped_events, dropped_bytes);
            }
            let text: String = chunk.get(1).map_err(self.fail())?;
            lines.take(first, &text);
        }
        let end = lines.cursor;
        Ok(Some(page(lines.text, offset, end, total)))
    }
}

/// A page being filled: `cursor` is the next event index, `room` the lines still wanted.
struct Lines {
    text: String,
    cursor: u64,
    room: u64,
}

impl Lines {
    /// One line for the dropped middle, which ends where the chunk at `next` starts.
    fn gap(&mut self, next: u64, events: u64, bytes: u64) {
        self.text.push_str(&format!(
            "{{\"type\":\"dropped\",\"events\":{events},\"bytes\":{bytes}}}\n"
        ));
        self.cursor = next;
        self.room -= 1;
    }

    /// The chunk's lines from the cursor on, as many as there is room for.
    fn take(&mut self, first: u64, chunk: &str) {
        let skip = self.cursor.saturating_sub(first) as usize;
        for line in chunk.split_terminator('\n').skip(skip) {
            if self.room == 0 {
                return;
            }
            self.text.push_str(line);
            self.text.push('\n');
            self.cursor += 1;
            self.room -= 1;
        }
    }
}

fn page(text: String, offset: u64, end: u64, total: u64) -> TextPage {
    TextPage {
        text,
        offset,
        total,
        next_offset: (end < total && end > offset).then_some(end),
    }
}

impl TextPage {
    /// Characters `offset..offset + limit` of `text`, as the answer is paged.
    pub fn of_chars(text: &str, offset: u64, limit: u64) -> Self {
        chars(text, offset, limit.max(1))
    }
}

/// Characters `offset..offset + limit` of `text`.
fn chars(text: &str, offset: u64, limit: u64) -> TextPage {
    let total = text.chars().count() as u64;
    let (start, end) = (offset.min(total), offset.saturating_add(limit).min(total));
    let byte = |from: usize, skip: u64| {
        text[from..]
            .char_indices()
            .nth(skip as usize)
            .map_or(text.len(), |(at, _)| from + at)
    };
    let from = byte(0, start);
    let to = byte(from, end - start);
    page(text[from..to].to_owned(), offset, end, total)
}

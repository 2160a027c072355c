//! Server-sent events off a reqwest response, read as they arrive: a small line reader after
//! the WHATWG rules these servers need (the `event` and `data` fields, several `data` lines
//! joined by newlines, comments, `id`, `retry` and blocks without data passed over; our servers
//! end lines with `\n`, and a `\r` before one is dropped). Bytes wait until their block is whole,
//! so a character split between two chunks stays whole.

/// The events of one response, read on demand.
#[derive(Default)]
pub struct Events {
    /// Read but not yet taken: the start of the next blocks.
    buffer: Vec<u8>,
}

/// One event: its name (`message` unless it says) and its data.
#[derive(Debug)]
pub struct Event {
    pub name: String,
    pub data: String,
}

impl Events {
    /// The next event of `response`, or `None` once its stream ends. What it read beyond that
    /// event waits for the next call. No deadline of its own: the caller sets one.
    pub async fn next(&mut self, response: &mut reqwest::Response) -> Option<Event> {
        loop {
            while let Some(block) = self.take_block() {
                if let Some(event) = parse(&block) {
                    return Some(event);
                }
            }
            let chunk = response.chunk().await.expect("read the event stream")?;
            self.buffer
                .extend(chunk.iter().filter(|&&byte| byte != b'\r'));
        }
    }

    /// The first whole block (up to a blank line), taken out of the buffer.
    fn take_block(&mut self) -> Option<String> {
        let end = self.buffer.windows(2).position(|pair| pair == b"\n\n")?;
        let block: Vec<u8> = self.buffer.drain(..end + 2).collect();
        Some(String::from_utf8_lossy(&block).into_owned())
    }
}

/// A block's event; `None` for a block without data (a keep-alive comment, a priming `id`).
fn parse(block: &str) -> Option<Event> {
    let mut name = None;
    let mut data: Option<String> = None;
    for line in block.lines() {
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match (field, &mut data) {
            ("event", _) => name = Some(value.to_owned()),
            ("data", Some(data)) => {
                data.push('\n');
                data.push_str(value);
            }
            ("data", None) => data = Some(value.to_owned()),
            _ => {}
        }
    }
    Some(Event {
        name: name.unwrap_or_else(|| "message".to_owned()),
        data: data.filter(|data| !data.is_empty())?,
    })
}

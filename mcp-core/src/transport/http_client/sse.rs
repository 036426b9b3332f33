//! Server-sent events, parsed incrementally from a response body (the WHATWG rules the MCP
//! transports need: `data`, `id`, `retry`, comments; `event` is read and ignored).

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    /// The joined `data` lines.
    pub(crate) data: String,
}

/// Feeds bytes in, takes events out. Keeps the last event id and the last `retry`.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    buf: Vec<u8>,
    data: Option<String>,
    /// The last `id` field seen (the stream's resumption point).
    pub(crate) last_id: Option<String>,
    /// The last `retry` field, in milliseconds.
    pub(crate) retry_ms: Option<u64>,
    /// A lone `\r` ended the previous chunk: a `\n` starting the next belongs to it.
    skip_lf: bool,
}

/// One line of an event stream is never longer than this (bytes); a longer one is an error.
pub(crate) const MAX_SSE_LINE: usize = 64 * 1024 * 1024;

impl SseParser {
    /// Adds `chunk` and returns the events it completed.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Result<Vec<Event>, String> {
        let mut events = Vec::new();
        let mut chunk = chunk;
        if self.skip_lf {
            self.skip_lf = false;
            if chunk.first() == Some(&b'\n') {
                chunk = &chunk[1..];
            }
        }
        self.buf.extend_from_slice(chunk);
        let mut start = 0;
        let mut i = 0;
        while i < self.buf.len() {
            let b = self.buf[i];
            if b == b'\n' || b == b'\r' {
                let line = String::from_utf8_lossy(&self.buf[start..i]).into_owned();
                let mut next = i + 1;
                if b == b'\r' {
                    if next < self.buf.len() {
                        if self.buf[next] == b'\n' {
                            next += 1;
                        }
                    } else {
                        self.skip_lf = true;
                    }
                }
                if let Some(event) = self.line(&line) {
                    events.push(event);
                }
                start = next;
                i = next;
            } else {
                i += 1;
            }
        }
        self.buf.drain(..start);
        if self.buf.len() > MAX_SSE_LINE {
            return Err("an event-stream line is longer than 64 MiB".into());
        }
        Ok(events)
    }

    fn line(&mut self, line: &str) -> Option<Event> {
        if line.is_empty() {
            // An event with empty data (the priming event of a resumable stream) is not
            // dispatched; its id still counts.
            return self
                .data
                .take()
                .filter(|d| !d.is_empty())
                .map(|data| Event { data });
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
            "retry" => {
                if let Ok(ms) = value.parse() {
                    self.retry_ms = Some(ms);
                }
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_with_every_line_ending() {
        let mut p = SseParser::default();
        assert!(p.feed(b"id: 1\r\nretry: 250\r").unwrap().is_empty());
        assert!(p.feed(b"\ndata:\r\n\r\n: keep-alive\n").unwrap().is_empty());
        let events = p.feed(b"id: 2\ndata: {\"a\":\ndata: 1}\n\n").unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "{\"a\":\n1}");
        assert_eq!(p.last_id.as_deref(), Some("2"));
        assert_eq!(p.retry_ms, Some(250));
    }

    #[test]
    fn a_priming_event_is_not_dispatched_but_sets_the_id() {
        let mut p = SseParser::default();
        assert!(p.feed(b"id: p\ndata:\n\n").unwrap().is_empty());
        assert_eq!(p.last_id.as_deref(), Some("p"));
    }
}

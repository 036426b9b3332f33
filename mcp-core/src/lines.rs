//! Newline-delimited framing with a size bound.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// One frame read from the stream.
pub(crate) enum Frame {
    /// A complete message (without its newline or a trailing `\r`).
    Line(Vec<u8>),
    /// A message longer than the bound; it was skipped up to its newline.
    TooLong,
}

/// Reads newline-delimited messages, never buffering more than `max` bytes of one message.
///
/// Cancel-safe: a partly read line is kept in the reader, so dropping a pending `next()` (in a
/// `select!`) loses nothing.
pub(crate) struct LineReader<R> {
    inner: BufReader<R>,
    max: usize,
    line: Vec<u8>,
    too_long: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(reader: R, max: usize) -> Self {
        Self {
            inner: BufReader::with_capacity(64 * 1024, reader),
            max,
            line: Vec::new(),
            too_long: false,
        }
    }

    /// True when bytes already read wait in the buffer (another message, or part of one).
    pub(crate) fn has_buffered(&self) -> bool {
        !self.inner.buffer().is_empty()
    }

    /// The next non-empty frame, or `None` at end of stream.
    pub(crate) async fn next(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            match self.next_raw().await? {
                Some(Frame::Line(line)) if line.iter().all(u8::is_ascii_whitespace) => continue,
                other => return Ok(other),
            }
        }
    }

    async fn next_raw(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                let too_long = std::mem::take(&mut self.too_long);
                let line = std::mem::take(&mut self.line);
                return Ok(match (too_long, line.is_empty()) {
                    (true, _) => Some(Frame::TooLong),
                    (false, true) => None,
                    (false, false) => Some(Frame::Line(line)),
                });
            }
            let (chunk, used, done) = match memchr::memchr(b'\n', available) {
                Some(i) => (&available[..i], i + 1, true),
                None => (available, available.len(), false),
            };
            if !self.too_long {
                if self.line.len() + chunk.len() > self.max {
                    self.too_long = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            self.inner.consume(used);
            if done {
                if std::mem::take(&mut self.too_long) {
                    return Ok(Some(Frame::TooLong));
                }
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(Frame::Line(line)));
            }
        }
    }
}

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
pub(crate) struct LineReader<R> {
    inner: BufReader<R>,
    max: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(reader: R, max: usize) -> Self {
        Self {
            inner: BufReader::with_capacity(64 * 1024, reader),
            max,
        }
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
        let mut line = Vec::new();
        let mut too_long = false;
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                return Ok(match (too_long, line.is_empty()) {
                    (true, _) => Some(Frame::TooLong),
                    (false, true) => None,
                    (false, false) => Some(Frame::Line(line)),
                });
            }
            let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (&available[..i], i + 1, true),
                None => (available, available.len(), false),
            };
            if !too_long {
                if line.len() + chunk.len() > self.max {
                    too_long = true;
                    line = Vec::new();
                } else {
                    line.extend_from_slice(chunk);
                }
            }
            self.inner.consume(used);
            if done {
                if too_long {
                    return Ok(Some(Frame::TooLong));
                }
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(Frame::Line(line)));
            }
        }
    }
}

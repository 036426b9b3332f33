//! The slice of RESP2 (the Redis protocol) a pub/sub client needs: commands out, replies and
//! pushed messages in. Lengths are bounded so a hostile or broken peer cannot make us allocate
//! without limit.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// The largest bulk string accepted: 16 MiB.
const MAX_BULK: usize = 16 * 1024 * 1024;
/// The most elements an array may have.
const MAX_ARRAY: usize = 1024;
/// The longest header line (`+OK`, `:1`, `$12`, ...).
const MAX_LINE: usize = 64 * 1024;

/// One reply or pushed message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Frame {
    Simple(String),
    Error(String),
    Integer(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Frame>>),
}

impl Frame {
    /// The bytes of a bulk or simple string.
    pub(crate) fn bytes(&self) -> Option<&[u8]> {
        match self {
            Self::Bulk(Some(b)) => Some(b),
            Self::Simple(s) => Some(s.as_bytes()),
            _ => None,
        }
    }
}

/// A command as an array of bulk strings.
pub(crate) fn command(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
    out
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("RESP: {what}"))
}

async fn line<R: AsyncBufRead + Unpin>(r: &mut R) -> io::Result<String> {
    let mut buf = Vec::new();
    let n = (&mut *r)
        .take(MAX_LINE as u64)
        .read_until(b'\n', &mut buf)
        .await?;
    if n == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "Redis closed the connection",
        ));
    }
    if !buf.ends_with(b"\r\n") {
        return Err(invalid("line without CRLF or too long"));
    }
    buf.truncate(buf.len() - 2);
    String::from_utf8(buf).map_err(|_| invalid("header is not UTF-8"))
}

fn length(text: &str, max: usize) -> io::Result<Option<usize>> {
    let n: i64 = text.parse().map_err(|_| invalid("bad length"))?;
    if n < 0 {
        return Ok(None);
    }
    let n = usize::try_from(n).map_err(|_| invalid("bad length"))?;
    if n > max {
        return Err(invalid("length over the limit"));
    }
    Ok(Some(n))
}

/// Reads a scalar frame (anything but an array) whose header line is `head`.
async fn scalar<R: AsyncBufRead + Unpin>(r: &mut R, head: &str) -> io::Result<Frame> {
    let Some(&kind) = head.as_bytes().first() else {
        return Err(invalid("empty header"));
    };
    // The type byte is ASCII in every valid frame, so slicing after it is on a char boundary.
    let rest = match kind {
        b'+' | b'-' | b':' | b'$' => &head[1..],
        _ => return Err(invalid("unknown frame type")),
    };
    match kind {
        b'+' => Ok(Frame::Simple(rest.to_owned())),
        b'-' => Ok(Frame::Error(rest.to_owned())),
        b':' => rest
            .parse()
            .map(Frame::Integer)
            .map_err(|_| invalid("bad integer")),
        _ => match length(rest, MAX_BULK)? {
            None => Ok(Frame::Bulk(None)),
            Some(n) => {
                let mut data = vec![0u8; n + 2];
                r.read_exact(&mut data).await?;
                if !data.ends_with(b"\r\n") {
                    return Err(invalid("bulk string without CRLF"));
                }
                data.truncate(n);
                Ok(Frame::Bulk(Some(data)))
            }
        },
    }
}

/// Reads one frame. Arrays may hold scalars only (all pub/sub needs).
pub(crate) async fn read<R: AsyncBufRead + Unpin>(r: &mut R) -> io::Result<Frame> {
    let head = line(r).await?;
    let Some(rest) = head.strip_prefix('*') else {
        return scalar(r, &head).await;
    };
    let Some(n) = length(rest, MAX_ARRAY)? else {
        return Ok(Frame::Array(None));
    };
    let mut items = Vec::with_capacity(n);
    for _ in 0..n {
        let head = line(r).await?;
        if head.starts_with('*') {
            return Err(invalid("nested arrays are not expected"));
        }
        items.push(scalar(r, &head).await?);
    }
    Ok(Frame::Array(Some(items)))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn parse(bytes: &[u8]) -> io::Result<Frame> {
        let mut r = tokio::io::BufReader::new(bytes);
        read(&mut r).await
    }

    #[tokio::test]
    async fn reads_pushed_messages_and_replies() {
        let msg = parse(b"*3\r\n$7\r\nmessage\r\n$4\r\nchan\r\n$2\r\n{}\r\n")
            .await
            .unwrap();
        assert_eq!(
            msg,
            Frame::Array(Some(vec![
                Frame::Bulk(Some(b"message".to_vec())),
                Frame::Bulk(Some(b"chan".to_vec())),
                Frame::Bulk(Some(b"{}".to_vec())),
            ]))
        );
        assert_eq!(parse(b":3\r\n").await.unwrap(), Frame::Integer(3));
        assert_eq!(
            parse(b"-ERR no\r\n").await.unwrap(),
            Frame::Error("ERR no".into())
        );
        assert_eq!(parse(b"$-1\r\n").await.unwrap(), Frame::Bulk(None));
    }

    #[tokio::test]
    async fn refuses_oversized_and_malformed_frames() {
        assert!(parse(b"$999999999999\r\n").await.is_err());
        assert!(parse(b"*2\r\n*1\r\n:1\r\n").await.is_err());
        assert!(parse(b"?what\r\n").await.is_err());
        assert!(
            parse("\u{e9}t\r\n".as_bytes()).await.is_err(),
            "a multi-byte first char"
        );
        assert!(parse(b"$3\r\nabcde").await.is_err());
        assert!(parse(b"").await.is_err());
    }

    #[test]
    fn commands_are_arrays_of_bulk_strings() {
        assert_eq!(command(&[b"PING"]), b"*1\r\n$4\r\nPING\r\n".to_vec());
    }
}

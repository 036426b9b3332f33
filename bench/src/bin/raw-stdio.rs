//! The physical limit over stdio: a hand-written loop with std buffered I/O and serde_json,
//! answering the same `initialize` and `tools/call add` (no MCP machinery at all). Flushes
//! whenever no more input is buffered, so both sequential and pipelined clients are served.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::os::fd::AsFd;

use serde_json::Value;

fn main() -> std::io::Result<()> {
    // Plain files over duplicates of fds 0 and 1: one buffer each, and `buffer()` tells when
    // the input is drained.
    let mut input = BufReader::with_capacity(
        64 * 1024,
        File::from(std::io::stdin().as_fd().try_clone_to_owned()?),
    );
    let mut output = BufWriter::with_capacity(
        64 * 1024,
        File::from(std::io::stdout().as_fd().try_clone_to_owned()?),
    );
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let Ok(msg) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let Some(answer) = mcp_bench::raw_answer(&msg, "raw") else {
            continue; // a notification
        };
        serde_json::to_writer(&mut output, &answer)?;
        output.write_all(b"\n")?;
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()
}

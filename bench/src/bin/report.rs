//! Turns the driver's JSON lines into `results.json` (for the chart) and prints the table of
//! BENCHMARKS.md with the ratios the targets are stated in.
//!
//! `report <results.jsonl> <results.json>`

use serde_json::Value;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let input = args
        .next()
        .unwrap_or_else(|| "results/results.jsonl".into());
    let output = args.next().unwrap_or_else(|| "results/results.json".into());
    let rows: Vec<Value> = std::fs::read_to_string(&input)?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    std::fs::write(&output, serde_json::to_string_pretty(&rows)?)?;
    let get = |imp: &str, scenario: &str, key: &str| {
        rows.iter()
            .find(|r| r["impl"] == imp && r["scenario"] == scenario)
            .and_then(|r| r["figures"][key].as_f64())
    };
    let fmt = |v: Option<f64>, digits: usize| v.map_or("-".to_owned(), |v| format!("{v:.digits$}"));
    println!("| scenario | implementation | calls/s | median µs | p99 µs | server CPU µs/call | peak RSS MiB |");
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: |");
    let client_row = |r: &&Value| {
        r["scenario"]
            .as_str()
            .is_some_and(|s| s.starts_with("client-"))
    };
    for r in rows
        .iter()
        .filter(|r| r["scenario"] != "build")
        .filter(|r| !client_row(r))
    {
        let f = &r["figures"];
        let rss = f["peak_rss_kib"].as_f64().map(|k| k / 1024.0);
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            r["scenario"].as_str().unwrap_or(""),
            r["impl"].as_str().unwrap_or(""),
            fmt(f["rate"].as_f64(), 0),
            fmt(f["median_us"].as_f64(), 1),
            fmt(f["p99_us"].as_f64(), 1),
            fmt(f["cpu_us_per_call"].as_f64(), 2),
            fmt(rss, 1),
        );
    }
    println!();
    println!("| client scenario | client | calls/s | client CPU µs/call |");
    println!("| --- | --- | ---: | ---: |");
    for r in rows.iter().filter(client_row) {
        let f = &r["figures"];
        println!(
            "| {} | {} | {} | {} |",
            r["scenario"].as_str().unwrap_or(""),
            r["impl"].as_str().unwrap_or(""),
            fmt(f["rate"].as_f64(), 0),
            fmt(f["client_cpu_us_per_call"].as_f64(), 2),
        );
    }
    println!();
    println!("| one-tool example, dev profile | clean build s | incremental s |");
    println!("| --- | ---: | ---: |");
    for r in rows.iter().filter(|r| r["scenario"] == "build") {
        let f = &r["figures"];
        println!(
            "| {} | {} | {} |",
            r["impl"].as_str().unwrap_or(""),
            fmt(f["clean_s"].as_f64(), 1),
            fmt(f["incremental_s"].as_f64(), 1)
        );
    }
    let ours = "modelctx (this SDK)";
    let limit = "limit (raw loop / bare hyper)";
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
        _ => "-".into(),
    };
    let (ours_2026, limit_2026) = (
        "modelctx (this SDK), 2026 wire",
        "limit (raw loop / bare hyper), 2026 wire",
    );
    let (our_client, rmcp_client) = ("modelctx client", "rmcp client");
    // Each target: what it says, then the figure measured and the one it is compared with
    // (implementation, scenario, field).
    type Figure<'a> = (&'a str, &'a str, &'a str);
    let targets: [(&str, Figure, Figure); 16] = [
        (
            "stdio pipelined vs raw loop >= 0.75x",
            (ours, "stdio-pipelined", "rate"),
            (limit, "stdio-pipelined", "rate"),
        ),
        (
            "stdio sequential, server and driver on one core, vs raw loop >= 0.75x",
            (ours, "stdio-sequential-same-core", "rate"),
            (limit, "stdio-sequential-same-core", "rate"),
        ),
        (
            "stdio sequential, server and driver on separate cores, vs raw loop",
            (ours, "stdio-sequential", "rate"),
            (limit, "stdio-sequential", "rate"),
        ),
        (
            "stdio pipelined, 2026 wire, vs the raw loop on the same messages >= 0.75x",
            (ours_2026, "stdio-pipelined", "rate"),
            (limit_2026, "stdio-pipelined", "rate"),
        ),
        (
            "stdio sequential, one core, 2026 wire, vs the raw loop on the same messages >= 0.75x",
            (ours_2026, "stdio-sequential-same-core", "rate"),
            (limit_2026, "stdio-sequential-same-core", "rate"),
        ),
        (
            "stdio sequential, separate cores, 2026 wire, vs the raw loop on the same messages",
            (ours_2026, "stdio-sequential", "rate"),
            (limit_2026, "stdio-sequential", "rate"),
        ),
        (
            "HTTP 32 connections vs bare hyper answering the same 2026 requests >= 0.85x",
            (ours, "http-32", "rate"),
            (limit, "http-32-2026", "rate"),
        ),
        (
            "HTTP 32 connections vs bare hyper on bare POSTs (no 2026 headers or envelope)",
            (ours, "http-32", "rate"),
            (limit, "http-32", "rate"),
        ),
        (
            "server CPU per call, 64 in flight, 2026 wire / 2025 wire <= 1.15x",
            (ours_2026, "stdio-pipelined", "cpu_us_per_call"),
            (ours, "stdio-pipelined", "cpu_us_per_call"),
        ),
        (
            "the same for the raw loop (what the bigger 2026 messages cost by themselves)",
            (limit_2026, "stdio-pipelined", "cpu_us_per_call"),
            (limit, "stdio-pipelined", "cpu_us_per_call"),
        ),
        (
            "HTTP 32 connections vs rmcp >= 1.5x",
            (ours, "http-32", "rate"),
            ("rmcp", "http-32", "rate"),
        ),
        (
            "client, 64 in flight, vs rmcp's client >= 5x",
            (our_client, "client-stdio-64", "rate"),
            (rmcp_client, "client-stdio-64", "rate"),
        ),
        (
            "client, 64 in flight, vs the hand-written driver >= 0.7x",
            (our_client, "client-stdio-64", "rate"),
            (limit, "stdio-pipelined", "rate"),
        ),
        (
            "client, 1 in flight, vs the hand-written driver",
            (our_client, "client-stdio-1", "rate"),
            (limit, "stdio-sequential", "rate"),
        ),
        (
            "clean build of the one-tool example, SDK as published, vs rmcp <= 1.0x",
            (ours, "build", "clean_s"),
            ("rmcp", "build", "clean_s"),
        ),
        (
            "the same, SDK built from its path (incremental, as local code)",
            (
                "modelctx (this SDK), from its path (incremental, as local code)",
                "build",
                "clean_s",
            ),
            ("rmcp", "build", "clean_s"),
        ),
    ];
    println!();
    println!("| target | measured |");
    println!("| --- | --- |");
    for (what, (a, sa, ka), (b, sb, kb)) in targets {
        println!("| {what} | {} |", ratio(get(a, sa, ka), get(b, sb, kb)));
    }
    Ok(())
}

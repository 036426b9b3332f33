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
    println!();
    println!("| target | measured |");
    println!("| --- | --- |");
    for (scenario, what, goal) in [
        ("stdio-pipelined", "stdio pipelined vs raw loop", ">= 0.75x"),
        (
            "stdio-sequential",
            "stdio sequential vs raw loop",
            ">= 0.75x",
        ),
        (
            "http-32",
            "HTTP 32 connections vs bare hyper on bare POSTs (no 2026 headers or envelope)",
            ">= 0.85x",
        ),
    ] {
        println!(
            "| {what} {goal} | {} |",
            ratio(get(ours, scenario, "rate"), get(limit, scenario, "rate"))
        );
    }
    let (ours_2026, limit_2026) = (
        "modelctx (this SDK), 2026 wire",
        "limit (raw loop / bare hyper), 2026 wire",
    );
    for (scenario, what) in [
        (
            "stdio-pipelined",
            "stdio pipelined, 2026 wire, vs the raw loop on the same messages",
        ),
        (
            "stdio-sequential",
            "stdio sequential, 2026 wire, vs the raw loop on the same messages",
        ),
    ] {
        println!(
            "| {what} >= 0.75x | {} |",
            ratio(
                get(ours_2026, scenario, "rate"),
                get(limit_2026, scenario, "rate")
            )
        );
    }
    println!(
        "| HTTP 32 connections vs bare hyper answering the same 2026 requests >= 0.85x | {} |",
        ratio(
            get(ours, "http-32", "rate"),
            get(limit, "http-32-2026", "rate")
        )
    );
    println!(
        "| server CPU per call, 64 in flight, 2026 wire / 2025 wire <= 1.15x (raw loop: {}) | {} |",
        ratio(
            get(limit_2026, "stdio-pipelined", "cpu_us_per_call"),
            get(limit, "stdio-pipelined", "cpu_us_per_call")
        ),
        ratio(
            get(ours_2026, "stdio-pipelined", "cpu_us_per_call"),
            get(ours, "stdio-pipelined", "cpu_us_per_call")
        )
    );
    println!(
        "| HTTP 32 connections vs rmcp >= 1.5x | {} |",
        ratio(get(ours, "http-32", "rate"), get("rmcp", "http-32", "rate"))
    );
    let (our_client, rmcp_client) = ("modelctx client", "rmcp client");
    println!(
        "| client, 64 in flight, vs rmcp's client >= 5x | {} |",
        ratio(
            get(our_client, "client-stdio-64", "rate"),
            get(rmcp_client, "client-stdio-64", "rate")
        )
    );
    println!(
        "| client, 64 in flight, vs the hand-written driver >= 0.7x | {} |",
        ratio(
            get(our_client, "client-stdio-64", "rate"),
            get(limit, "stdio-pipelined", "rate")
        )
    );
    println!(
        "| client, 1 in flight, vs the hand-written driver | {} |",
        ratio(
            get(our_client, "client-stdio-1", "rate"),
            get(limit, "stdio-sequential", "rate")
        )
    );
    Ok(())
}

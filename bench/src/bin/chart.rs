//! Draws BENCHMARKS.svg from the driver's results: throughput and p99 latency per transport,
//! this SDK beside rmcp and the raw limit.
//!
//! `chart <results.json> <out.svg>`; results are `[{"impl", "scenario", "figures"}]`.

use plotters::prelude::*;
use serde_json::Value;

const IMPLS: [(&str, RGBColor); 3] = [
    ("modelctx (this SDK)", RGBColor(31, 119, 180)),
    ("rmcp", RGBColor(255, 127, 14)),
    ("limit (raw loop / bare hyper)", RGBColor(120, 120, 120)),
];

fn figure(results: &[Value], imp: &str, scenario: &str, key: &str) -> f64 {
    results
        .iter()
        .find(|r| r["impl"] == imp && r["scenario"] == scenario)
        .and_then(|r| r["figures"][key].as_f64())
        .unwrap_or(0.0)
}

fn panel(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    title: &str,
    results: &[Value],
    groups: &[(&str, &str)],
    key: &str,
    unit: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let max = groups
        .iter()
        .flat_map(|(s, _)| IMPLS.iter().map(move |(i, _)| figure(results, i, s, key)))
        .fold(0.0f64, f64::max)
        .max(1.0)
        * 1.15;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..groups.len() as f64, 0f64..max)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(groups.len() * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - i as f64 - 0.5).abs() < 0.01 && i < groups.len() {
                groups[i].1.to_owned()
            } else {
                String::new()
            }
        })
        .y_desc(unit)
        .draw()?;
    for (g, (scenario, _)) in groups.iter().enumerate() {
        for (k, (imp, color)) in IMPLS.iter().enumerate() {
            let v = figure(results, imp, scenario, key);
            let x0 = g as f64 + 0.1 + k as f64 * 0.27;
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x0, 0.0), (x0 + 0.25, v)],
                color.filled(),
            )))?;
        }
    }
    for (imp, color) in IMPLS {
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(0.0, 0.0), (0.0, 0.0)],
                color.filled(),
            )))?
            .label(imp)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let input = args.next().unwrap_or_else(|| "results/results.json".into());
    let output = args.next().unwrap_or_else(|| "BENCHMARKS.svg".into());
    let results: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&input)?)?;
    let root = SVGBackend::new(&output, (1100, 900)).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(450);
    let throughput = [
        ("stdio-sequential", "stdio, 1 in flight"),
        ("stdio-pipelined", "stdio, 64 in flight"),
        ("http-1", "HTTP, 1 connection"),
        ("http-32", "HTTP, 32 connections"),
    ];
    panel(
        &top,
        "Throughput (higher is better)",
        &results,
        &throughput,
        "rate",
        "calls or requests per second",
    )?;
    let latency = [
        ("stdio-sequential", "stdio, 1 in flight"),
        ("http-1", "HTTP, 1 connection"),
        ("http-32", "HTTP, 32 connections"),
    ];
    panel(
        &bottom,
        "p99 latency (lower is better)",
        &results,
        &latency,
        "p99_us",
        "microseconds",
    )?;
    root.present()?;
    eprintln!("wrote {output}");
    Ok(())
}

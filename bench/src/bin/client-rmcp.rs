//! rmcp's client against a stdio server: `client-rmcp <in_flight> <calls> -- <server...>`.
//! Prints one JSON line of figures.

use mcp_bench::client_load::{measure, sum_of};
use rmcp::model::CallToolRequestParams;
use rmcp::service::{Peer, RoleClient};
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;

#[tokio::main]
async fn main() {
    let (in_flight, n, cmd) = mcp_bench::client_load::args();
    let mut command = tokio::process::Command::new(&cmd[0]);
    command.args(&cmd[1..]);
    let transport = TokioChildProcess::new(command).expect("spawns");
    let service = ().serve(transport).await.expect("connects");
    let peer = service.peer().clone();
    let figures = measure(
        peer,
        |peer: Peer<RoleClient>, i| async move {
            let mut arguments = serde_json::Map::new();
            arguments.insert("a".into(), (i as i64).into());
            arguments.insert("b".into(), 1.into());
            let result = peer
                .call_tool(CallToolRequestParams::new("add").with_arguments(arguments))
                .await
                .expect("call");
            sum_of(
                result
                    .content
                    .first()
                    .and_then(|c| c.as_text())
                    .map(|t| t.text.as_str()),
            )
        },
        n,
        in_flight,
    )
    .await;
    println!("{figures}");
    let _ = service.cancel().await;
}

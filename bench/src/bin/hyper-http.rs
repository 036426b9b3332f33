//! The physical limit over HTTP: a bare hyper 1 server answering each POST with the same JSON
//! a one-tool MCP server would (initialize, notifications 202, tools/call add), and nothing
//! else: no routing, no validation, no sessions. Prints its URL.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use serde_json::Value;

async fn answer(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
        return Ok(status(StatusCode::BAD_REQUEST));
    };
    let Some(answer) = mcp_bench::raw_answer(&msg, "hyper") else {
        return Ok(status(StatusCode::ACCEPTED));
    };
    let text = serde_json::to_vec(&answer).unwrap_or_default();
    Ok(Response::builder()
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(text)))
        .unwrap_or_else(|_| status(StatusCode::INTERNAL_SERVER_ERROR)))
}

fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = code;
    response
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("http://{}/mcp", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, hyper::service::service_fn(answer))
                .await;
        });
    }
}

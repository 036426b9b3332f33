use mcp::transport::RawConnection;
use mcp::prelude::*;
#[tokio::test]
async fn dbg() {
    let mut c = RawConnection::open(Server::new("x")).await.unwrap();
    c.send("{bad").await.unwrap();
    eprintln!("got {:?}", c.recv().await);
    c.send(r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#).await.unwrap();
    eprintln!("got {:?}", c.recv().await);
}

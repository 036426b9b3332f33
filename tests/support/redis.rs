//! A Redis for the tests that need one: `MCP_TEST_REDIS_URL`, or a `redis-server` started on a
//! free loopback port (killed, by PID, when dropped); `None` (the test skips, saying why on
//! stderr) when there is neither, unless `MCP_TEST_REQUIRE_REDIS=1`.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A `redis-server` a test started.
pub struct OwnRedis(Child);

impl Drop for OwnRedis {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The Redis URL (`redis://host:port`) and the server started for it, if one was.
pub fn redis() -> Option<(String, Option<OwnRedis>)> {
    if let Ok(url) = std::env::var("MCP_TEST_REDIS_URL") {
        return Some((url, None));
    }
    let present = super::runs("redis-server");
    if !super::outside_program(
        "redis",
        present,
        "apt-get install redis-server, or set MCP_TEST_REDIS_URL",
    ) {
        return None;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server starts");
    let own = OwnRedis(child);
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some((format!("redis://127.0.0.1:{port}"), Some(own)));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("redis-server did not start on port {port}");
}

//! A Redis for the tests that need one, and the one place that decides whether they run:
//! `MCP_TEST_REDIS_URL`, or a `redis-server` from `PATH` started on a free loopback port (killed,
//! by PID, when dropped). With neither, the test skips and says why on stderr, unless
//! `MCP_TEST_REQUIRE_REDIS=1` (set by `.ci/run`), which makes a missing Redis a failure.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How to get Redis, as the skip notice and the failure say it.
const HOW: &str = "apt-get install redis-server, or set MCP_TEST_REDIS_URL";

/// A `redis-server` a test started on 127.0.0.1.
pub struct OwnRedis {
    child: Child,
    port: u16,
}

impl OwnRedis {
    /// Starts `redis-server` on a free loopback port.
    pub fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Self::start_on(port)
    }

    /// Starts `redis-server` on `port` (again, after a test stopped the one it had there).
    pub fn start_on(port: u16) -> Self {
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("redis-server does not start ({HOW}): {e}"));
        // Owned from here on: dropping it kills and reaps the process.
        let own = Self { child, port };
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return own;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("redis-server did not start on port {port}");
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether a test may start its own `redis-server`: true when one is on `PATH`; otherwise
/// false after a notice on stderr, or a panic under `MCP_TEST_REQUIRE_REDIS=1`.
pub fn redis_server_on_path() -> bool {
    super::outside_program("redis", super::runs("redis-server"), HOW)
}

/// The Redis URL (`redis://host:port`) and the server started for it, if one was; `None` when
/// the test is to skip (see the module docs).
pub fn redis() -> Option<(String, Option<OwnRedis>)> {
    if let Ok(url) = std::env::var("MCP_TEST_REDIS_URL") {
        return Some((url, None));
    }
    if !redis_server_on_path() {
        return None;
    }
    let own = OwnRedis::start();
    Some((own.url(), Some(own)))
}

/// A `redis-server` of the test's own (one it may stop and restart), whatever
/// `MCP_TEST_REDIS_URL` says; `None` when the test is to skip.
pub fn own_redis() -> Option<OwnRedis> {
    redis_server_on_path().then(OwnRedis::start)
}

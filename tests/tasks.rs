//! The 2026 tasks extension (SEP-2663) on the server: tools that run as tasks, `tasks/get`
//! with the result or error inlined, `tasks/update` for a parked task's input, `tasks/cancel`,
//! the required/forbidden rules and the extension's error codes, and a task store shared by
//! two servers through Redis.

mod support;

use std::time::Duration;

use modelctx::input::Elicited;
use modelctx::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

use modelctx::server::{MemoryTaskStore, RedisTaskStore, TaskRecord, TaskStore};
use modelctx::transport::RawConnection;
use modelctx::types::TaskStatus;
use serde_json::{json, Value};
use support::redis::redis;
use support::{modern, roundtrip};

const TASKS: &str = "io.modelcontextprotocol/tasks";

#[allow(unreachable_pub)] // shared by two test crates, each using part of it
#[path = "support/task_tools.rs"]
mod task_tools;
use task_tools::Name;

fn server() -> McpServer {
    task_tools::server("tasks-test")
}

/// A 2026 request whose client declared the tasks extension (and form elicitation).
fn with_tasks(id: i64, method: &str, params: Value) -> Value {
    let mut line = modern(id, method, params);
    line["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {TASKS: {}}, "elicitation": {}});
    line
}

async fn call(conn: &mut RawConnection, id: i64, tool: &str, args: Value) -> Value {
    let answer = roundtrip(
        conn,
        &with_tasks(id, "tools/call", json!({"name": tool, "arguments": args})),
    )
    .await;
    answer["result"].clone()
}

async fn get(conn: &mut RawConnection, task_id: &str) -> Value {
    let answer = roundtrip(
        conn,
        &with_tasks(90, "tasks/get", json!({"taskId": task_id})),
    )
    .await;
    assert!(answer.get("error").is_none(), "{answer}");
    answer["result"].clone()
}

/// Polls `tasks/get` until the task's status is `status` (at most 5 s).
async fn until(conn: &mut RawConnection, task_id: &str, status: &str) -> Value {
    for _ in 0..250 {
        let task = get(conn, task_id).await;
        if task["status"] == status {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!(
        "task {task_id} never became {status}: {}",
        get(conn, task_id).await
    );
}

/// An empty ack: `resultType: "complete"` and no task fields.
fn assert_ack(answer: &Value) {
    let ack = &answer["result"];
    assert_eq!(ack["resultType"], "complete", "{answer}");
    for field in ["taskId", "status", "result", "error", "inputRequests"] {
        assert!(ack.get(field).is_none(), "{field} in {answer}");
    }
}

#[tokio::test]
async fn a_task_tool_answers_with_a_flat_task_and_tasks_get_inlines_its_result() {
    let mut conn = RawConnection::open(server()).await.unwrap();
    let created = call(&mut conn, 1, "work", json!({"ms": 300})).await;
    assert_eq!(created["resultType"], "task");
    assert_eq!(created["status"], "working");
    assert!(created.get("task").is_none() && created.get("result").is_none());
    assert_eq!(created["ttlMs"], 3_600_000);
    assert_eq!(created["pollIntervalMs"], 500);
    let stamp = created["createdAt"].as_str().unwrap();
    assert!(stamp.len() == 24 && stamp.ends_with('Z') && stamp.as_bytes()[10] == b'T');
    let id = created["taskId"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 32);

    let working = get(&mut conn, &id).await;
    assert_eq!(working["resultType"], "complete");
    assert_eq!(working["status"], "working");
    assert!(working.get("result").is_none());

    let done = until(&mut conn, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "worked 300 ms");
    assert!(done.get("error").is_none() && done.get("requestState").is_none());
}

#[tokio::test]
async fn a_tool_error_completes_with_is_error_and_a_protocol_error_fails() {
    let mut conn = RawConnection::open(server()).await.unwrap();
    let broken = call(&mut conn, 1, "broken", json!({})).await;
    let task = until(&mut conn, broken["taskId"].as_str().unwrap(), "completed").await;
    assert_eq!(task["result"]["isError"], true);
    assert_eq!(task["result"]["content"][0]["text"], "disk full");

    let crashing = call(&mut conn, 2, "crashing", json!({})).await;
    let task = until(&mut conn, crashing["taskId"].as_str().unwrap(), "failed").await;
    assert_eq!(task["error"]["code"], -32602);
    assert_eq!(task["error"]["message"], "bad job");
    assert!(task.get("result").is_none());
}

#[tokio::test]
async fn a_parked_task_takes_its_answers_through_tasks_update() {
    let mut conn = RawConnection::open(server()).await.unwrap();
    let created = call(&mut conn, 1, "two_names", json!({})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    let parked = until(&mut conn, &id, "input_required").await;
    let asked = parked["inputRequests"].as_object().unwrap();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked["first"]["method"], "elicitation/create");

    // One answer (and one for a question never asked): acked, the other stays pending.
    let answer = |name: &str| json!({"action": "accept", "content": {"name": name}});
    let ack = roundtrip(
        &mut conn,
        &with_tasks(
            2,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"first": answer("Ada"), "nope": {}}}),
        ),
    )
    .await;
    assert_ack(&ack);
    let still = get(&mut conn, &id).await;
    assert_eq!(still["status"], "input_required");
    let pending: Vec<&String> = still["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(pending, ["second"]);

    let ack = roundtrip(
        &mut conn,
        &with_tasks(
            3,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"second": answer("Grace")}}),
        ),
    )
    .await;
    assert_ack(&ack);
    let done = until(&mut conn, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Ada and Grace");
}

#[tokio::test]
async fn cancel_ends_a_running_task_cancelled_and_acks_again_once_terminal() {
    let mut conn = RawConnection::open(server()).await.unwrap();
    let created = call(&mut conn, 1, "work", json!({"ms": 60_000})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    for n in 2..4 {
        let ack = roundtrip(
            &mut conn,
            &with_tasks(n, "tasks/cancel", json!({"taskId": id})),
        )
        .await;
        assert_ack(&ack);
        let task = get(&mut conn, &id).await;
        assert_eq!(task["status"], "cancelled");
        assert!(task.get("result").is_none());
    }
}

#[tokio::test]
async fn required_and_forbidden_tools_and_clients_without_the_extension() {
    let mut conn = RawConnection::open(server()).await.unwrap();
    // A required-task tool from a client without the extension: -32021 naming it.
    let refused = roundtrip(
        &mut conn,
        &modern(1, "tools/call", json!({"name": "broken", "arguments": {}})),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32021);
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"][TASKS],
        json!({})
    );
    // An optional one runs synchronously for it.
    let sync = roundtrip(
        &mut conn,
        &modern(
            2,
            "tools/call",
            json!({"name": "work", "arguments": {"ms": 1}}),
        ),
    )
    .await;
    assert_eq!(sync["result"]["resultType"], "complete");
    assert_eq!(sync["result"]["content"][0]["text"], "worked 1 ms");
    // A forbidden one never becomes a task, even with the extension.
    let quick = call(&mut conn, 3, "quick", json!({})).await;
    assert_eq!(quick["resultType"], "complete");
    assert!(quick.get("taskId").is_none());
    // tools/list shows each tool's task support.
    let list = roundtrip(&mut conn, &modern(4, "tools/list", json!({}))).await;
    let support = |name: &str| {
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()["execution"]["taskSupport"]
            .clone()
    };
    assert_eq!(support("work"), "optional");
    assert_eq!(support("broken"), "required");
    assert_eq!(support("quick"), "forbidden");
}

#[tokio::test]
async fn a_2025_session_runs_task_tools_synchronously_and_is_not_offered_tasks() {
    let mut conn = RawConnection::open(server()).await.unwrap();
    support::handshake(&mut conn, "2025-11-25").await;
    let list = roundtrip(&mut conn, &support::request(1, "tools/list", json!({}))).await;
    let work = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "work")
        .unwrap()
        .clone();
    assert!(work.get("execution").is_none(), "{work}");
    let sync = roundtrip(
        &mut conn,
        &support::request(
            2,
            "tools/call",
            json!({"name": "work", "arguments": {"ms": 1}}),
        ),
    )
    .await;
    assert_eq!(sync["result"]["content"][0]["text"], "worked 1 ms");
}

#[tokio::test]
async fn the_extension_is_advertised_and_its_methods_and_codes_are_exact() {
    let mut conn = RawConnection::open(server()).await.unwrap();
    let discover = roundtrip(&mut conn, &modern(1, "server/discover", json!({}))).await;
    let caps = &discover["result"]["capabilities"];
    assert_eq!(caps["extensions"][TASKS], json!({}));
    assert!(caps.get("tasks").is_none());

    let unknown = roundtrip(
        &mut conn,
        &with_tasks(2, "tasks/get", json!({"taskId": "no-such-task"})),
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32602);
    for (n, method) in ["tasks/update", "tasks/cancel"].iter().enumerate() {
        let unknown = roundtrip(
            &mut conn,
            &with_tasks(
                3 + n as i64,
                method,
                json!({"taskId": "no-such-task", "inputResponses": {}}),
            ),
        )
        .await;
        assert_eq!(unknown["error"]["code"], -32602, "{method}");
    }
    let ungated = roundtrip(
        &mut conn,
        &modern(5, "tasks/get", json!({"taskId": "no-such-task"})),
    )
    .await;
    assert_eq!(ungated["error"]["code"], -32021);
    for method in ["tasks/result", "tasks/list"] {
        let gone = roundtrip(&mut conn, &with_tasks(6, method, json!({"taskId": "x"}))).await;
        assert_eq!(gone["error"]["code"], -32601, "{method}");
    }
}

#[tokio::test]
async fn a_server_without_task_tools_does_not_offer_the_extension() {
    let mut conn = RawConnection::open(McpServer::new("plain").tool(task_tools::QuickTool))
        .await
        .unwrap();
    let discover = roundtrip(&mut conn, &modern(1, "server/discover", json!({}))).await;
    assert!(discover["result"]["capabilities"]
        .get("extensions")
        .is_none());
    let gone = roundtrip(
        &mut conn,
        &with_tasks(2, "tasks/get", json!({"taskId": "x"})),
    )
    .await;
    assert_eq!(gone["error"]["code"], -32601);
}

#[tokio::test]
async fn input_before_task_asks_in_the_request_then_starts_the_task() {
    let mut conn = RawConnection::open(server()).await.unwrap();
    let first = call(&mut conn, 1, "ask_then_work", json!({})).await;
    assert_eq!(first["resultType"], "input_required");
    assert!(first.get("taskId").is_none());
    let state = first["requestState"].clone();
    let retry = roundtrip(
        &mut conn,
        &with_tasks(
            2,
            "tools/call",
            json!({
                "name": "ask_then_work",
                "arguments": {},
                "inputResponses": {"who": {"action": "accept", "content": {"name": "Alice"}}},
                "requestState": state,
            }),
        ),
    )
    .await;
    let created = &retry["result"];
    assert_eq!(created["resultType"], "task", "{retry}");
    assert!(created.get("requestState").is_none() && created.get("inputRequests").is_none());
    let done = until(&mut conn, created["taskId"].as_str().unwrap(), "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "done for Alice");
}

#[tokio::test]
async fn the_memory_store_is_bounded() {
    let mut conn = RawConnection::open(server().task_store(MemoryTaskStore::max_tasks(1)))
        .await
        .unwrap();
    let first = call(&mut conn, 1, "work", json!({"ms": 1})).await;
    until(&mut conn, first["taskId"].as_str().unwrap(), "completed").await;
    // Full: the ended task makes room.
    let second = call(&mut conn, 2, "work", json!({"ms": 60_000})).await;
    let evicted = roundtrip(
        &mut conn,
        &with_tasks(3, "tasks/get", json!({"taskId": first["taskId"]})),
    )
    .await;
    assert_eq!(evicted["error"]["code"], -32602);
    // Full of unfinished tasks: a new one is refused, the running one is kept.
    let refused = roundtrip(
        &mut conn,
        &with_tasks(
            4,
            "tools/call",
            json!({"name": "work", "arguments": {"ms": 1}}),
        ),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Too many unfinished tasks on this server (the limit is 1)"),
        "{refused}"
    );
    assert_eq!(
        get(&mut conn, second["taskId"].as_str().unwrap()).await["status"],
        "working"
    );
}

/// A record as a server writes it, for the store tests.
fn record(id: &str, ttl_ms: u64) -> TaskRecord {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    serde_json::from_value(json!({
        "taskId": id, "status": "working", "createdAt": "2026-12-01T00:00:00.000Z",
        "lastUpdatedAt": "2026-12-01T00:00:00.000Z", "ttlMs": ttl_ms,
        "expiresAtMs": now + ttl_ms, "tool": "work", "arguments": {},
    }))
    .unwrap()
}

/// Of two writers that read the same version, the first wins and the second is told so; a
/// retried write (its reply lost) recognises itself.
async fn compare_and_set(store: &dyn TaskStore, id: &str) {
    store.create(record(id, 60_000)).await.unwrap();
    let read = store.get(id).await.unwrap().unwrap();
    let (mut cancel, mut finish) = (read.clone(), read.clone());
    cancel.status = TaskStatus::Cancelled;
    cancel.version = 11;
    finish.status = TaskStatus::Completed;
    finish.version = 12;
    assert!(store.replace(cancel.clone(), read.version).await.unwrap());
    assert!(
        !store.replace(finish, read.version).await.unwrap(),
        "a stale write lost"
    );
    let stored = store.get(id).await.unwrap().unwrap();
    assert_eq!(stored.status, TaskStatus::Cancelled);
    assert_eq!(stored.version, 11);
    assert!(
        store.replace(cancel, read.version).await.unwrap(),
        "a retried write"
    );
    let mut again = stored;
    again.last_updated_at = "2026-12-01T00:00:01.000Z".into();
    again.version = 13;
    assert!(store.replace(again, 11).await.unwrap());
    assert_eq!(store.get(id).await.unwrap().unwrap().version, 13);
    // An unknown task is not created by a replace.
    assert!(!store
        .replace(record("never-created", 60_000), 0)
        .await
        .unwrap());
    assert!(store.get("never-created").await.unwrap().is_none());
    // A second create of the same task is a retry; another task of its id is refused.
    store.create(record("twice", 60_000)).await.unwrap();
    let twice = store.get("twice").await.unwrap().unwrap();
    store.create(twice.clone()).await.unwrap();
    let mut other = twice;
    other.tool = "another".into();
    assert!(store.create(other).await.is_err());
}

#[tokio::test]
async fn stores_compare_versions_so_a_stale_transition_loses() {
    compare_and_set(&MemoryTaskStore::default(), "memory-task").await;
    let Some((url, _own)) = redis() else { return };
    let prefix = format!("mcp-test:cas:{}:", std::process::id());
    let store = RedisTaskStore::connect_prefixed(&url, &prefix)
        .await
        .unwrap();
    compare_and_set(&store, "redis-task").await;
}

/// A task expires `ttlMs` after its creation, however often it changed: a change does not
/// extend its life.
async fn expires_from_creation(server: McpServer) {
    let mut conn = RawConnection::open(server.task_ttl(Duration::from_millis(800)))
        .await
        .unwrap();
    let created = call(&mut conn, 1, "two_names", json!({})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    until(&mut conn, &id, "input_required").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let answer = json!({"action": "accept", "content": {"name": "Ada"}});
    let ack = roundtrip(
        &mut conn,
        &with_tasks(
            2,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"first": answer}}),
        ),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let gone = roundtrip(
        &mut conn,
        &with_tasks(3, "tasks/get", json!({"taskId": id})),
    )
    .await;
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
}

#[tokio::test]
async fn a_change_does_not_extend_a_tasks_life() {
    expires_from_creation(server()).await;
    let Some((url, _own)) = redis() else { return };
    let prefix = format!("mcp-test:ttl:{}:", std::process::id());
    let store = RedisTaskStore::connect_prefixed(&url, &prefix)
        .await
        .unwrap();
    expires_from_creation(server().task_store(store)).await;
}

static COUNTED_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Counts its runs; asks a name.
#[tool(task = "optional")]
async fn counted(ctx: RequestContext) -> modelctx::Result<String> {
    COUNTED_RUNS.fetch_add(1, Ordering::SeqCst);
    match ctx.elicit::<Name>("who", "Who?").await? {
        Elicited::Accepted(form) => Ok(format!("hello {}", form.name)),
        _ => Ok("hello nobody".into()),
    }
}

#[tokio::test]
async fn two_updates_answering_at_once_run_the_tool_once() {
    let Some((url, _own)) = redis() else { return };
    let prefix = format!("mcp-test:updates:{}:", std::process::id());
    let store = || RedisTaskStore::connect_prefixed(&url, &prefix);
    let replica = || server().tool(CountedTool);
    let mut a = RawConnection::open(replica().task_store(store().await.unwrap()))
        .await
        .unwrap();
    let mut b = RawConnection::open(replica().task_store(store().await.unwrap()))
        .await
        .unwrap();
    for round in 0..5 {
        COUNTED_RUNS.store(0, Ordering::SeqCst);
        let created = call(&mut a, 1, "counted", json!({})).await;
        let id = created["taskId"].as_str().unwrap().to_owned();
        until(&mut a, &id, "input_required").await;
        let answer = json!({"action": "accept", "content": {"name": "Ada"}});
        let update = with_tasks(
            2,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"who": answer}}),
        );
        a.send_json(&update).await.unwrap();
        b.send_json(&update).await.unwrap();
        for conn in [&mut a, &mut b] {
            let ack = conn.recv_json().await.unwrap();
            assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
        }
        let done = until(&mut b, &id, "completed").await;
        assert_eq!(done["result"]["content"][0]["text"], "hello Ada");
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(
            COUNTED_RUNS.load(Ordering::SeqCst),
            2,
            "round {round}: the first run and exactly one run after the answer"
        );
    }
}

#[tokio::test]
async fn a_cancel_racing_the_tools_end_leaves_one_final_state() {
    let mut conn = RawConnection::open(server()).await.unwrap();
    for round in 0..40u64 {
        let created = call(&mut conn, 1, "work", json!({"ms": round % 4})).await;
        let id = created["taskId"].as_str().unwrap().to_owned();
        let ack = roundtrip(
            &mut conn,
            &with_tasks(2, "tasks/cancel", json!({"taskId": id})),
        )
        .await;
        assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
        let first = get(&mut conn, &id).await["status"].clone();
        assert!(first == "cancelled" || first == "completed", "{first}");
        tokio::time::sleep(Duration::from_millis(10)).await;
        let later = get(&mut conn, &id).await["status"].clone();
        assert_eq!(first, later, "round {round}: an ended task changed");
    }
}

#[tokio::test]
async fn a_task_started_on_one_replica_is_read_and_updated_on_another() {
    let Some((url, _own)) = redis() else { return };
    let prefix = format!("mcp-test:tasks:{}:", std::process::id());
    let store = || RedisTaskStore::connect_prefixed(&url, &prefix);
    let mut a = RawConnection::open(server().task_store(store().await.unwrap()))
        .await
        .unwrap();
    let mut b = RawConnection::open(server().task_store(store().await.unwrap()))
        .await
        .unwrap();

    // Started on A, finished there, read on B.
    let created = call(&mut a, 1, "work", json!({"ms": 100})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    assert_eq!(get(&mut b, &id).await["taskId"], id.as_str());
    let done = until(&mut b, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "worked 100 ms");

    // Parked on A, answered through B (which runs the tool again), read on A.
    let created = call(&mut a, 2, "two_names", json!({})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    until(&mut b, &id, "input_required").await;
    let answer = |name: &str| json!({"action": "accept", "content": {"name": name}});
    let ack = roundtrip(
        &mut b,
        &with_tasks(
            3,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"first": answer("Ada"), "second": answer("Lin")}}),
        ),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete");
    let done = until(&mut a, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Ada and Lin");

    // Cancelled through B while A runs it.
    let created = call(&mut a, 4, "work", json!({"ms": 60_000})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    roundtrip(
        &mut b,
        &with_tasks(5, "tasks/cancel", json!({"taskId": id})),
    )
    .await;
    assert_eq!(get(&mut a, &id).await["status"], "cancelled");
}

#[tokio::test]
async fn a_listener_hears_the_status_changes_of_the_tasks_it_names() {
    let mut conn = RawConnection::open(server()).await.unwrap();
    let created = call(&mut conn, 1, "two_names", json!({})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    until(&mut conn, &id, "input_required").await;

    // Without the extension, a filter naming tasks is refused.
    let refused = roundtrip(
        &mut conn,
        &modern(
            2,
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [id]}}),
        ),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");

    let ack = roundtrip(
        &mut conn,
        &with_tasks(
            3,
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [id]}}),
        ),
    )
    .await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    // Another task's changes are not heard.
    call(&mut conn, 4, "work", json!({"ms": 1})).await;

    let answer = |name: &str| json!({"action": "accept", "content": {"name": name}});
    conn.send_json(&with_tasks(
        5,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"first": answer("A"), "second": answer("B")}}),
    ))
    .await
    .unwrap();
    let mut heard = Vec::new();
    while !heard.contains(&"completed".to_owned()) {
        let line = tokio::time::timeout(Duration::from_secs(5), conn.recv_json())
            .await
            .expect("the listener hears the task complete")
            .unwrap();
        if line["method"] == "notifications/tasks" {
            assert_eq!(line["params"]["taskId"], id.as_str(), "{line}");
            heard.push(line["params"]["status"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(heard, ["working", "completed"]);
}

#[tokio::test]
async fn a_task_is_gone_after_its_ttl() {
    let mut conn = RawConnection::open(server().task_ttl(Duration::from_millis(150)))
        .await
        .unwrap();
    let created = call(&mut conn, 1, "work", json!({"ms": 1})).await;
    assert_eq!(created["ttlMs"], 150);
    let id = created["taskId"].clone();
    until(&mut conn, id.as_str().unwrap(), "completed").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let gone = roundtrip(
        &mut conn,
        &with_tasks(2, "tasks/get", json!({"taskId": id})),
    )
    .await;
    assert_eq!(gone["error"]["code"], -32602);
}

#[tokio::test]
async fn a_task_ended_on_another_replica_no_longer_counts_against_the_limit() {
    let Some((url, _own)) = redis() else { return };
    let prefix = format!("mcp-test:limits:{}:", std::process::id());
    let store = || RedisTaskStore::connect_prefixed(&url, &prefix);
    let mut a = RawConnection::open(server().max_tasks(1).task_store(store().await.unwrap()))
        .await
        .unwrap();
    let mut b = RawConnection::open(server().task_store(store().await.unwrap()))
        .await
        .unwrap();
    let first = call(&mut a, 1, "work", json!({"ms": 60_000})).await;
    let id = first["taskId"].as_str().unwrap().to_owned();
    let refused = roundtrip(
        &mut a,
        &with_tasks(
            2,
            "tools/call",
            json!({"name": "work", "arguments": {"ms": 1}}),
        ),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    // Cancelled through B: A finds it ended when it checks, and takes a new task.
    let ack = roundtrip(
        &mut b,
        &with_tasks(3, "tasks/cancel", json!({"taskId": id})),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let second = call(&mut a, 4, "work", json!({"ms": 1})).await;
    assert_eq!(second["resultType"], "task", "{second}");
}

#[tokio::test]
async fn a_client_at_its_limit_is_refused_before_the_tool_asks_anything() {
    let mut conn = RawConnection::open(server().max_tasks(1)).await.unwrap();
    call(&mut conn, 1, "work", json!({"ms": 60_000})).await;
    let refused = roundtrip(
        &mut conn,
        &with_tasks(
            2,
            "tools/call",
            json!({"name": "ask_then_work", "arguments": {}}),
        ),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert!(
        refused.get("result").is_none(),
        "no question asked: {refused}"
    );
}

#[tokio::test]
async fn a_tasks_life_is_capped_at_30_days() {
    let mut conn = RawConnection::open(server().task_ttl(Duration::from_secs(365 * 24 * 3600)))
        .await
        .unwrap();
    let created = call(&mut conn, 1, "work", json!({"ms": 1})).await;
    assert_eq!(created["ttlMs"], 30u64 * 24 * 3_600_000, "{created}");
}

#[tokio::test]
async fn a_listen_filter_keeps_each_known_task_once() {
    let mut conn = RawConnection::open(server()).await.unwrap();
    let created = call(&mut conn, 1, "two_names", json!({})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    let ack = roundtrip(
        &mut conn,
        &with_tasks(
            2,
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [id, "no-such-task", id]}}),
        ),
    )
    .await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([id]),
        "{ack}"
    );
}

//! Registering tools, resources and prompts: a key taken twice is refused (a panic on the
//! builder, an error on the handle), `replace_*` swaps on purpose; every list is paged the same
//! way; `icon` and `meta` of `#[resource]`/`#[prompt]` reach the lists.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use modelctx::prelude::*;
use modelctx::server::{PromptDef, RegistrationError, ResourceDef, ToolDef};
use modelctx::types::*;
use serde_json::json;

/// Adds two numbers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Greets someone.
#[tool]
async fn greet(who: String) -> String {
    format!("Hello, {who}!")
}

/// The about page.
#[resource("shop://about")]
async fn about() -> String {
    "A bookshop.".into()
}

/// One book.
#[resource("books://{id}")]
async fn book(id: u32) -> String {
    format!("book {id}")
}

/// Asks for a review.
#[prompt]
async fn review(title: String) -> String {
    format!("Review {title}.")
}

/// The shop's logo.
#[resource(
    "shop://logo",
    icon = "https://example.com/logo.png",
    icon = "https://example.com/logo-dark.png",
    meta = r#"{"vendor/kind": "image", "vendor/rank": 1}"#
)]
async fn logo() -> Vec<u8> {
    vec![1, 2, 3]
}

/// One author.
#[resource(
    "authors://{name}",
    icon = "https://example.com/author.png",
    meta = r#"{"vendor/kind": "person"}"#
)]
async fn author(name: String) -> String {
    name
}

/// Asks for a summary.
#[prompt(
    icon = "https://example.com/summary.png",
    meta = r#"{"vendor/audience": ["editors"]}"#
)]
async fn summarize(text: String) -> String {
    format!("Summarize: {text}")
}

/// A `#[tools]` value with a tool renamed to `add`.
struct Calculator;

#[tools]
impl Calculator {
    /// Adds, on a calculator.
    #[tool(name = "add")]
    async fn plus(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

/// A tool named `name` that answers `reply`.
fn fixed_tool(name: &str, reply: &'static str) -> ToolDef<()> {
    ToolDef::from_schema(name, json!({"type": "object"}), move |_, _| async move {
        Ok(CallToolResult::text(reply))
    })
    .unwrap()
    .description(reply)
}

/// A fixed resource at `uri` that reads as `text`.
fn fixed_resource(uri: &str, text: &'static str) -> ResourceDef<()> {
    ResourceDef::new(uri, "fixed", move |_, uri, _| async move {
        Ok(ReadResourceResult::new(vec![ResourceContents::text(
            uri, text,
        )]))
    })
    .unwrap()
    .description(text)
}

/// A prompt named `name` whose one message is `text`.
fn fixed_prompt(name: &str, text: &'static str) -> PromptDef<()> {
    PromptDef::new(
        name,
        move |_, _| async move { Ok(String::from(text).into()) },
    )
    .description(text)
}

/// The message of the panic `build` raises.
fn panic_message(build: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(build)).expect_err("registration should panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

fn resource_text(result: &ReadResourceResult) -> Option<&str> {
    match &result.contents[0] {
        ResourceContents::Text(t) => Some(&t.text),
        _ => None,
    }
}

fn first_text(result: &CallToolResult) -> &str {
    result.content[0].as_text().unwrap_or("")
}

async fn next_method(client: &Client) -> String {
    tokio::time::timeout(Duration::from_secs(5), client.next_notification())
        .await
        .expect("a notification")
        .expect("the connection is open")
        .method
}

#[test]
#[should_panic(
    expected = "a tool named `add` is already registered; use `replace_tool` to replace it"
)]
fn a_second_tool_with_the_same_name_panics_at_start_up() {
    let _ = McpServer::new("dup")
        .tool(AddTool)
        .tool(GreetTool)
        .tool(AddTool);
}

#[test]
fn every_kind_of_clash_panics_naming_what_clashed() {
    let tool = panic_message(|| {
        let _ = McpServer::new("dup")
            .tool(AddTool)
            .tool(fixed_tool("add", "another add"));
    });
    assert_eq!(
        tool,
        "McpServer: a tool named `add` is already registered; use `replace_tool` to replace it"
    );
    let from_a_set = panic_message(|| {
        let _ = McpServer::new("dup").tool(AddTool).tools(Calculator);
    });
    assert_eq!(
        from_a_set, tool,
        "a #[tools] value's tool clashes the same way"
    );
    let resource = panic_message(|| {
        let _ = McpServer::new("dup")
            .resource(AboutResource)
            .resource(fixed_resource("shop://about", "another about"));
    });
    assert_eq!(
        resource,
        "McpServer: a resource at `shop://about` is already registered; use `replace_resource` to replace it"
    );
    let template = panic_message(|| {
        let _ = McpServer::new("dup")
            .resource(BookResource)
            .resource(BookResource);
    });
    assert_eq!(
        template,
        "McpServer: a resource template `books://{id}` is already registered; use `replace_resource` to replace it"
    );
    let prompt = panic_message(|| {
        let _ = McpServer::new("dup")
            .prompt(ReviewPrompt)
            .prompt(fixed_prompt("review", "another review"));
    });
    assert_eq!(
        prompt,
        "McpServer: a prompt named `review` is already registered; use `replace_prompt` to replace it"
    );
}

#[test]
fn the_same_name_for_different_kinds_is_not_a_clash() {
    let server = McpServer::new("ok")
        .tool(fixed_tool("review", "a tool"))
        .prompt(ReviewPrompt)
        .resource(fixed_resource("review", "a resource"));
    assert_eq!(server.tool_names(), ["review"]);
}

/// Registrations where `replace_*` swaps some definitions and adds one.
fn replaced() -> McpServer {
    McpServer::new("replace")
        .tool(fixed_tool("first", "old first"))
        .tool(fixed_tool("second", "second"))
        .replace_tool(fixed_tool("first", "new first"))
        .replace_tool(fixed_tool("third", "third"))
        .resource(fixed_resource("shop://about", "old about"))
        .replace_resource(fixed_resource("shop://about", "new about"))
        .prompt(fixed_prompt("review", "old review"))
        .replace_prompt(fixed_prompt("review", "new review"))
}

#[test]
fn debug_shows_what_is_registered() {
    let server = McpServer::new("shown")
        .tool(AddTool)
        .resource(BookResource)
        .prompt(ReviewPrompt);
    let shown = format!("{:?}", server.handle());
    assert_eq!(
        shown,
        r#"ServerHandle { tools: ["add"], resources: ["books://{id}"], prompts: ["review"], .. }"#
    );
    assert!(format!("{server:?}").starts_with("McpServer { tools: [\"add\"]"));
}

#[tokio::test]
async fn replace_on_the_builder_swaps_the_definition_in_place() {
    for builder in [Client::builder(), Client::builder().legacy()] {
        let client = builder.connect(replaced()).await.unwrap();
        let tools = client.list_tools().await.unwrap().tools;
        let listed: Vec<_> = tools
            .iter()
            .map(|t| (t.name.as_str(), t.description.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(
            listed,
            [
                ("first", "new first"),
                ("second", "second"),
                ("third", "third")
            ]
        );
        let called = client.call_tool("first", json!({})).await.unwrap();
        assert_eq!(first_text(&called), "new first");
        let read = client.read_resource("shop://about").await.unwrap();
        assert_eq!(resource_text(&read), Some("new about"));
        assert_eq!(client.list_resources().await.unwrap().resources.len(), 1);
        let got = client.get_prompt("review", BTreeMap::new()).await.unwrap();
        assert_eq!(got.messages[0].content.as_text(), Some("new review"));
        assert_eq!(client.list_prompts().await.unwrap().prompts.len(), 1);
        client.close().await;
    }
}

#[tokio::test]
async fn adding_a_taken_key_at_run_time_is_an_error_and_the_server_keeps_serving() {
    let server = McpServer::new("live")
        .tool(AddTool)
        .resource(AboutResource)
        .resource(BookResource)
        .prompt(ReviewPrompt);
    let handle = server.handle();
    let client = Client::builder().legacy().connect(server).await.unwrap();

    let err = handle
        .add_tool(fixed_tool("add", "impostor"))
        .expect_err("the name is taken");
    assert_eq!(err, RegistrationError::DuplicateTool { name: "add".into() });
    assert_eq!(
        err.to_string(),
        "a tool named `add` is already registered; use `replace_tool` to replace it"
    );
    let as_std: &dyn std::error::Error = &err;
    assert!(as_std.source().is_none());
    let err = handle.add_resource(AboutResource).unwrap_err();
    assert_eq!(
        err,
        RegistrationError::DuplicateResource {
            uri: "shop://about".into()
        }
    );
    let err = handle.add_resource(BookResource).unwrap_err();
    assert_eq!(
        err.to_string(),
        "a resource template `books://{id}` is already registered; use `replace_resource` to replace it"
    );
    let err = handle
        .add_prompt(fixed_prompt("review", "impostor"))
        .unwrap_err();
    assert_eq!(
        err,
        RegistrationError::DuplicatePrompt {
            name: "review".into()
        }
    );

    // Nothing changed and nothing was announced: the next notification is the real change.
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(first_text(&sum), "5");
    let read = client.read_resource("shop://about").await.unwrap();
    assert_eq!(resource_text(&read), Some("A bookshop."));
    let args = BTreeMap::from([("title".to_owned(), "Dune".to_owned())]);
    let got = client.get_prompt("review", args).await.unwrap();
    assert_eq!(got.messages[0].content.as_text(), Some("Review Dune."));
    handle.add_tool(GreetTool).unwrap();
    assert_eq!(
        next_method(&client).await,
        "notifications/tools/list_changed"
    );
    let names: Vec<_> = client
        .list_tools()
        .await
        .unwrap()
        .tools
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["add", "greet"]);
    client.close().await;
}

#[tokio::test]
async fn replace_on_the_handle_is_announced() {
    let server = McpServer::new("live")
        .tool(fixed_tool("status", "old status"))
        .resource(fixed_resource("shop://about", "old about"))
        .prompt(fixed_prompt("review", "old review"));
    let handle = server.handle();
    let client = Client::builder().legacy().connect(server).await.unwrap();

    handle.replace_tool(fixed_tool("status", "new status"));
    assert_eq!(
        next_method(&client).await,
        "notifications/tools/list_changed"
    );
    let called = client.call_tool("status", json!({})).await.unwrap();
    assert_eq!(first_text(&called), "new status");
    assert_eq!(client.list_tools().await.unwrap().tools.len(), 1);

    handle.replace_resource(fixed_resource("shop://about", "new about"));
    assert_eq!(
        next_method(&client).await,
        "notifications/resources/list_changed"
    );
    let read = client.read_resource("shop://about").await.unwrap();
    assert_eq!(resource_text(&read), Some("new about"));

    handle.replace_prompt(fixed_prompt("review", "new review"));
    assert_eq!(
        next_method(&client).await,
        "notifications/prompts/list_changed"
    );
    let got = client.get_prompt("review", BTreeMap::new()).await.unwrap();
    assert_eq!(got.messages[0].content.as_text(), Some("new review"));
    let prompts = client.list_prompts().await.unwrap().prompts;
    assert_eq!(prompts.len(), 1);
    assert_eq!(prompts[0].description.as_deref(), Some("new review"));
    client.close().await;
}

/// Five fixed resources, three templates and five prompts.
fn catalog() -> McpServer {
    let mut server = McpServer::new("catalog");
    for i in 0..5 {
        server = server.resource(fixed_resource(&format!("shop://r{i}"), "r"));
        server = server.prompt(fixed_prompt(&format!("p{i}"), "p"));
    }
    for i in 0..3 {
        let template = format!("shop://t{i}/{{id}}");
        server = server.resource(fixed_resource(&template, "t"));
    }
    server
}

/// Every page of one list: (pages, entries).
async fn walk<F, Fut>(mut fetch: F) -> (usize, Vec<String>)
where
    F: FnMut(Option<String>) -> Fut,
    Fut: std::future::Future<Output = (Vec<String>, Option<String>)>,
{
    let (mut pages, mut all, mut cursor) = (0, Vec::new(), None);
    loop {
        let (entries, next) = fetch(cursor.take()).await;
        assert!(entries.len() <= 2, "a page holds at most page_size entries");
        pages += 1;
        all.extend(entries);
        match next {
            Some(next) => cursor = Some(next),
            None => return (pages, all),
        }
    }
}

#[tokio::test]
async fn resources_templates_and_prompts_are_paged_like_tools() {
    for builder in [Client::builder(), Client::builder().legacy()] {
        let client = builder.connect(catalog().page_size(2)).await.unwrap();
        let era = client.era();
        let c = &client;
        let (pages, uris) = walk(|cursor| async move {
            let page = c.list_resources_page(cursor.as_deref()).await.unwrap();
            let uris = page.resources.into_iter().map(|r| r.uri).collect();
            (uris, page.next_cursor)
        })
        .await;
        assert_eq!(pages, 3, "{era:?}");
        assert_eq!(
            uris,
            [
                "shop://r0",
                "shop://r1",
                "shop://r2",
                "shop://r3",
                "shop://r4"
            ]
        );
        let (pages, templates) = walk(|cursor| async move {
            let page = c
                .list_resource_templates_page(cursor.as_deref())
                .await
                .unwrap();
            let uris = page
                .resource_templates
                .into_iter()
                .map(|t| t.uri_template)
                .collect();
            (uris, page.next_cursor)
        })
        .await;
        assert_eq!(pages, 2, "{era:?}");
        assert_eq!(
            templates,
            ["shop://t0/{id}", "shop://t1/{id}", "shop://t2/{id}"]
        );
        let (pages, prompts) = walk(|cursor| async move {
            let page = c.list_prompts_page(cursor.as_deref()).await.unwrap();
            let names = page.prompts.into_iter().map(|p| p.name).collect();
            (names, page.next_cursor)
        })
        .await;
        assert_eq!(pages, 3, "{era:?}");
        assert_eq!(prompts, ["p0", "p1", "p2", "p3", "p4"]);

        let bad = client
            .list_resources_page(Some("nonsense"))
            .await
            .unwrap_err();
        assert_eq!(bad.code(), -32602, "{era:?}");
        assert!(
            bad.message().contains("Invalid cursor"),
            "{}",
            bad.message()
        );
        let bad = client
            .list_resource_templates_page(Some("99"))
            .await
            .unwrap_err();
        assert_eq!(bad.code(), -32602, "{era:?}: past the end");
        let bad = client.list_prompts_page(Some("-1")).await.unwrap_err();
        assert_eq!(bad.code(), -32602, "{era:?}");
        client.close().await;
    }
}

#[tokio::test]
async fn without_a_page_size_every_list_is_one_page() {
    let client = Client::connect(catalog()).await.unwrap();
    let resources = client.list_resources_page(None).await.unwrap();
    assert_eq!(resources.resources.len(), 5);
    assert_eq!(resources.next_cursor, None);
    let templates = client.list_resource_templates_page(None).await.unwrap();
    assert_eq!(templates.resource_templates.len(), 3);
    assert_eq!(templates.next_cursor, None);
    let prompts = client.list_prompts_page(None).await.unwrap();
    assert_eq!(prompts.prompts.len(), 5);
    assert_eq!(prompts.next_cursor, None);
    client.close().await;
}

#[tokio::test]
async fn icons_and_meta_from_the_macros_reach_every_list_in_both_eras() {
    let server = || {
        McpServer::new("icons")
            .resource(LogoResource)
            .resource(AuthorResource)
            .prompt(SummarizePrompt)
    };
    for builder in [Client::builder(), Client::builder().legacy()] {
        let client = builder.connect(server()).await.unwrap();
        let era = client.era();
        let logo = client.list_resources().await.unwrap().resources.remove(0);
        let srcs: Vec<_> = logo.icons.unwrap().into_iter().map(|i| i.src).collect();
        assert_eq!(
            srcs,
            [
                "https://example.com/logo.png",
                "https://example.com/logo-dark.png"
            ],
            "{era:?}"
        );
        assert_eq!(
            json!(logo.meta),
            json!({"vendor/kind": "image", "vendor/rank": 1})
        );
        let author = client
            .list_resource_templates()
            .await
            .unwrap()
            .resource_templates
            .remove(0);
        assert_eq!(
            author.icons.unwrap()[0].src,
            "https://example.com/author.png"
        );
        assert_eq!(json!(author.meta), json!({"vendor/kind": "person"}));
        let prompt = client.list_prompts().await.unwrap().prompts.remove(0);
        assert_eq!(
            prompt.icons.unwrap()[0].src,
            "https://example.com/summary.png"
        );
        assert_eq!(json!(prompt.meta), json!({"vendor/audience": ["editors"]}));
        client.close().await;
    }
}

/// A list that changes between pages neither skips nor repeats: removing an entry already sent
/// (or the last one sent) does not shift the next page, and an entry added meanwhile comes at
/// the end. Tools and prompts, both eras.
#[tokio::test]
async fn pages_survive_changes_between_them() {
    for legacy in [false, true] {
        let server = catalog().page_size(2);
        let handle = server.handle();
        let builder = if legacy {
            Client::builder().legacy()
        } else {
            Client::builder()
        };
        let client = builder.connect(server).await.unwrap();
        let names = |page: ListPromptsResult| {
            let names: Vec<String> = page.prompts.into_iter().map(|p| p.name).collect();
            (names, page.next_cursor)
        };
        let (first, cursor) = names(client.list_prompts_page(None).await.unwrap());
        assert_eq!(first, ["p0", "p1"]);
        assert!(handle.remove_prompt("p0"));
        let (second, cursor) = names(client.list_prompts_page(cursor.as_deref()).await.unwrap());
        assert_eq!(second, ["p2", "p3"], "legacy: {legacy}");
        // The last entry sent is gone too: the page starts where the cursor said it would.
        assert!(handle.remove_prompt("p3"));
        handle.add_prompt(fixed_prompt("p9", "p")).unwrap();
        let (third, cursor) = names(client.list_prompts_page(cursor.as_deref()).await.unwrap());
        assert_eq!(third, ["p4", "p9"], "legacy: {legacy}");
        assert_eq!(cursor, None);
        client.close().await;
    }
}

/// The panic of a duplicate names the line that registered the second one (`#[track_caller]`),
/// not a line inside the SDK.
#[test]
fn the_duplicate_panic_points_at_the_registering_line() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let Some(at) = info.location() {
            record
                .lock()
                .unwrap()
                .push((at.file().to_owned(), at.line()));
        }
    }));
    let before = line!();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        McpServer::new("dup").tool(AddTool).tool(AddTool)
    }));
    let after = line!();
    std::panic::set_hook(previous);
    assert!(outcome.is_err());
    let seen = seen.lock().unwrap();
    assert!(
        seen.iter()
            .any(|(file, at)| file.ends_with("registration.rs") && (before..after).contains(at)),
        "panic locations: {seen:?}"
    );
}

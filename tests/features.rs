//! Resources, prompts and completion on the high-level server, and seed 004's catalog.

#[allow(unreachable_pub)] // the example program's items are `pub` for this test to reach
#[path = "../examples/catalog.rs"]
mod catalog;

use std::collections::BTreeMap;
use std::time::Duration;

use modelctx::prelude::*;
use modelctx::types::*;
use serde_json::json;

/// The about page.
#[resource("shop://about", mime_type = "text/plain")]
async fn about() -> String {
    "A bookshop.".into()
}

/// One book by id.
#[resource("books://{id}", name = "book", mime_type = "application/json")]
async fn book(
    /// The book's number.
    #[arg(complete = book_ids)]
    id: u32,
) -> Option<String> {
    (id == 1).then(|| json!({"id": 1, "title": "Dune"}).to_string())
}

fn book_ids(prefix: &str) -> Vec<String> {
    (1..=150)
        .map(|n| n.to_string())
        .filter(|n| n.starts_with(prefix))
        .collect()
}

/// A file of the shop's documents.
#[resource("docs:///{+path}")]
fn doc(path: String) -> Result<Vec<u8>, McpError> {
    match path.as_str() {
        "logo.png" => Ok(vec![0x89, b'P', b'N', b'G']),
        "broken" => Err(McpError::internal("disk on fire")),
        _ => Err(McpError::invalid_params(format!("no document {path}"))),
    }
}

/// Ask for a book review.
#[prompt(title = "Review")]
async fn review(
    /// The book to review.
    #[arg(complete = titles)]
    title: String,
    /// The tone, e.g. "enthusiastic".
    tone: Option<String>,
) -> String {
    format!(
        "Review {title} in a {} tone.",
        tone.as_deref().unwrap_or("neutral")
    )
}

fn titles(prefix: &str) -> Vec<String> {
    ["Dune", "Dune Messiah", "Emma"]
        .iter()
        .filter(|t| t.to_lowercase().starts_with(&prefix.to_lowercase()))
        .map(|t| (*t).to_owned())
        .collect()
}

fn server() -> McpServer {
    McpServer::new("features")
        .resource(AboutResource)
        .resource(BookResource)
        .resource(DocResource)
        .prompt(ReviewPrompt)
}

#[tokio::test]
async fn resources_and_templates_are_listed_apart() {
    let client = Client::connect(server()).await.unwrap();
    let resources = client.list_resources().await.unwrap().resources;
    assert_eq!(resources.len(), 1);
    assert_eq!(resources[0].uri, "shop://about");
    assert_eq!(resources[0].description.as_deref(), Some("The about page."));
    let templates = client
        .list_resource_templates()
        .await
        .unwrap()
        .resource_templates;
    let uris: Vec<_> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert_eq!(uris, ["books://{id}", "docs:///{+path}"]);
    assert_eq!(templates[0].name, "book");
    assert_eq!(templates[0].mime_type.as_deref(), Some("application/json"));
    client.close().await;
}

#[tokio::test]
async fn reading_binds_variables_and_refuses_traversal() {
    for builder in [Client::builder(), Client::builder().legacy()] {
        let client = builder.connect(server()).await.unwrap();
        let about = client.read_resource("shop://about").await.unwrap();
        assert_eq!(
            serde_json::to_value(&about.contents).unwrap(),
            json!([{"uri": "shop://about", "mimeType": "text/plain", "text": "A bookshop."}])
        );
        let dune = client.read_resource("books://1").await.unwrap();
        assert_eq!(
            serde_json::to_value(&dune.contents[0]).unwrap()["text"],
            r#"{"id":1,"title":"Dune"}"#
        );
        let logo = client.read_resource("docs:///logo.png").await.unwrap();
        assert_eq!(
            serde_json::to_value(&logo.contents[0]).unwrap()["blob"],
            "iVBORw=="
        );

        let legacy = client.era() == Era::Legacy;
        let not_found = if legacy { -32002 } else { -32602 };
        for uri in [
            "books://2",
            "books://abc",
            "docs:///../etc/passwd",
            "nowhere://x",
        ] {
            let err = client.read_resource(uri).await.unwrap_err();
            assert_eq!(err.code(), not_found, "{uri}");
            assert_eq!(err.message(), "Resource not found");
            assert_eq!(err.data(), Some(&json!({"uri": uri})));
        }
        let err = client.read_resource("docs:///broken").await.unwrap_err();
        assert_eq!(
            (err.code(), err.message().as_ref()),
            (-32603, "Internal server error")
        );
        let err = client
            .read_resource("docs:///missing.txt")
            .await
            .unwrap_err();
        assert_eq!(
            (err.code(), err.message().as_ref()),
            (-32602, "no document missing.txt")
        );
        client.close().await;
    }
}

#[tokio::test]
async fn prompts_take_their_arguments_from_parameters() {
    let client = Client::connect(server()).await.unwrap();
    let prompts = client.list_prompts().await.unwrap().prompts;
    assert_eq!(
        serde_json::to_value(&prompts).unwrap(),
        json!([{
            "name": "review",
            "title": "Review",
            "description": "Ask for a book review.",
            "arguments": [
                {"name": "title", "description": "The book to review.", "required": true},
                {"name": "tone", "description": "The tone, e.g. \"enthusiastic\".", "required": false}
            ]
        }])
    );
    let args = BTreeMap::from([("title".to_owned(), "Dune".to_owned())]);
    let got = client.get_prompt("review", args).await.unwrap();
    assert_eq!(got.messages[0].role, Role::User);
    assert_eq!(
        got.messages[0].content.as_text(),
        Some("Review Dune in a neutral tone.")
    );
    let err = client
        .get_prompt("review", BTreeMap::new())
        .await
        .unwrap_err();
    assert_eq!(
        (err.code(), err.message().as_ref()),
        (-32602, "Missing required argument: title")
    );
    let err = client
        .get_prompt("summary", BTreeMap::new())
        .await
        .unwrap_err();
    assert_eq!(
        (err.code(), err.message().as_ref()),
        (-32602, "Unknown prompt: summary")
    );
    client.close().await;
}

#[tokio::test]
async fn completion_for_prompts_and_templates() {
    let client = Client::connect(server()).await.unwrap();
    let prompt = CompletionReference::Prompt {
        name: "review".into(),
        title: None,
    };
    let done = client
        .complete(prompt.clone(), "title", "du")
        .await
        .unwrap();
    assert_eq!(done.completion.values, ["Dune", "Dune Messiah"]);
    assert_eq!(done.completion.has_more, Some(false));
    let template = CompletionReference::Resource {
        uri: "books://{id}".into(),
    };
    let ids = client.complete(template, "id", "").await.unwrap();
    assert_eq!(ids.completion.values.len(), 100, "at most 100 values");
    assert_eq!(ids.completion.total, Some(150));
    assert_eq!(ids.completion.has_more, Some(true));
    let none = client.complete(prompt, "tone", "x").await.unwrap();
    assert!(none.completion.values.is_empty(), "no completer: no values");
    client.close().await;
}

#[tokio::test]
async fn runtime_changes_to_resources_and_prompts_are_announced() {
    let server = McpServer::new("live").resource(AboutResource);
    let handle = server.handle();
    let client = Client::builder().legacy().connect(server).await.unwrap();
    handle.add_prompt(ReviewPrompt).unwrap();
    let note = tokio::time::timeout(Duration::from_secs(5), client.next_notification())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(note.method, "notifications/prompts/list_changed");
    assert!(handle.remove_resource("shop://about"));
    let note = tokio::time::timeout(Duration::from_secs(5), client.next_notification())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(note.method, "notifications/resources/list_changed");
    assert!(client.list_resources().await.unwrap().resources.is_empty());
    assert_eq!(client.list_prompts().await.unwrap().prompts.len(), 1);
    client.close().await;
}

#[tokio::test]
async fn catalog_search_and_a_hand_written_subscribe() {
    let subscriptions = catalog::Subscriptions::default();
    let client = Client::builder()
        .legacy()
        .connect(catalog::server(subscriptions.clone()))
        .await
        .unwrap();
    let caps = &client.initialize_result().unwrap().capabilities;
    assert_eq!(caps.resources.as_ref().unwrap().subscribe, Some(true));
    let tools = client.list_tools().await.unwrap().tools;
    assert_eq!(tools[0].name, "search");
    assert_eq!(
        tools[0].description.as_deref(),
        Some("Search the product catalog")
    );
    let hits = client
        .call_tool("search", json!({"query": "mug"}))
        .await
        .unwrap();
    assert_eq!(hits.content, vec![ContentBlock::text("Travel mug")]);
    let bad = client
        .call_tool("search", json!({"query": 42}))
        .await
        .unwrap();
    assert!(bad.is_error);
    assert_eq!(
        bad.content[0].as_text(),
        Some("query: 42 is not of type \"string\"")
    );
    client
        .subscribe_resource("catalog://products")
        .await
        .unwrap();
    assert!(subscriptions.lock().unwrap().contains("catalog://products"));
    client.close().await;
}

//! Completers that are async, read the server's state and see the other arguments already
//! filled in (`context.arguments`), next to the plain `fn(&str)` form, through the in-memory
//! client in both eras.

use modelctx::prelude::*;
use modelctx::server::{CompletionRequest, PromptDef, ResourceDef, State};
use modelctx::types::*;
use serde_json::{json, Value};

struct Shop {
    books: Vec<(&'static str, &'static str)>,
}

fn shop() -> Shop {
    Shop {
        books: vec![
            ("Herbert", "Dune"),
            ("Herbert", "Dune Messiah"),
            ("Austen", "Emma"),
            ("Austen", "Persuasion"),
        ],
    }
}

/// Authors starting with what was typed (the plain form).
fn authors(typed: &str) -> Vec<String> {
    ["Austen", "Herbert"]
        .iter()
        .filter(|a| a.starts_with(typed))
        .map(|a| a.to_string())
        .collect()
}

/// Titles of the author already chosen, from the state, after an await.
async fn titles(req: CompletionRequest<Shop>) -> Vec<String> {
    tokio::task::yield_now().await;
    let author = req.arguments.get("author").map(String::as_str);
    req.state()
        .books
        .iter()
        .filter(|(by, title)| author.is_none_or(|a| a == *by) && title.starts_with(&req.value))
        .map(|(_, title)| title.to_string())
        .collect()
}

/// Review one book.
#[prompt]
async fn review(
    shop: State<Shop>,
    #[arg(complete = authors)] author: String,
    #[arg(complete = titles)] title: String,
) -> String {
    let known = shop.books.iter().any(|(a, t)| *a == author && *t == title);
    format!("Review {title} by {author} ({known}).")
}

/// Chapter numbers of the book in the URI: a plain function that reads the other variable.
fn chapters(req: CompletionRequest<Shop>) -> Vec<String> {
    let count = match req.arguments.get("title").map(String::as_str) {
        Some("Dune") => 48,
        Some(_) => 3,
        None => 0,
    };
    (1..=count)
        .map(|n: u32| n.to_string())
        .filter(|n| n.starts_with(&req.value))
        .collect()
}

/// A chapter of a book.
#[resource("books://{title}/chapters/{chapter}")]
async fn book_chapter(
    _ctx: RequestContext<Shop>,
    title: String,
    #[arg(complete = chapters)] chapter: u32,
) -> String {
    format!("{title}, chapter {chapter}")
}

/// Numbers, more than one answer holds.
async fn many(req: CompletionRequest<Shop>) -> Vec<String> {
    (0..250).map(|n| format!("{}{n}", req.value)).collect()
}

fn server() -> McpServer<Shop> {
    let hand_built = PromptDef::<Shop>::new("pick", |_, args| async move {
        Ok(format!("Picked {}.", args["n"]).into())
    })
    .argument("n", None, true)
    .complete("n", many);
    McpServer::with_state("shop", shop())
        .prompt(ReviewPrompt)
        .prompt(hand_built)
        .resource(BookChapterResource)
}

fn builders() -> [modelctx::client::ClientBuilder; 2] {
    [Client::builder(), Client::builder().legacy()]
}

/// `completion/complete` with `context.arguments` (the client's `complete` sends none).
async fn complete(
    client: &Client,
    reference: Value,
    argument: &str,
    value: &str,
    context: Option<Value>,
) -> Completion {
    let mut params = json!({"ref": reference, "argument": {"name": argument, "value": value}});
    if let Some(arguments) = context {
        params["context"] = json!({ "arguments": arguments });
    }
    let result: CompleteResult = client
        .request_typed("completion/complete", params)
        .await
        .unwrap();
    result.completion
}

fn review_ref() -> Value {
    json!({"type": "ref/prompt", "name": "review"})
}

#[tokio::test]
async fn a_plain_prefix_completer_still_works() {
    for builder in builders() {
        let client = builder.connect(server()).await.unwrap();
        let done = complete(&client, review_ref(), "author", "H", None).await;
        assert_eq!(done.values, ["Herbert"], "{:?}", client.era());
        client.close().await;
    }
}

#[tokio::test]
async fn an_async_completer_reads_the_state_and_the_other_arguments() {
    for builder in builders() {
        let client = builder.connect(server()).await.unwrap();
        let era = client.era();
        let by_herbert = complete(
            &client,
            review_ref(),
            "title",
            "D",
            Some(json!({"author": "Herbert"})),
        )
        .await;
        assert_eq!(by_herbert.values, ["Dune", "Dune Messiah"], "{era:?}");
        let by_austen = complete(
            &client,
            review_ref(),
            "title",
            "",
            Some(json!({"author": "Austen"})),
        )
        .await;
        assert_eq!(by_austen.values, ["Emma", "Persuasion"], "{era:?}");
        let anyone = complete(&client, review_ref(), "title", "E", None).await;
        assert_eq!(
            anyone.values,
            ["Emma"],
            "no context: every author ({era:?})"
        );
        assert_eq!((anyone.total, anyone.has_more), (Some(1), Some(false)));
        client.close().await;
    }
}

#[tokio::test]
async fn a_plain_completer_of_a_template_sees_the_other_variable() {
    for builder in builders() {
        let client = builder.connect(server()).await.unwrap();
        let template = json!({"type": "ref/resource", "uri": "books://{title}/chapters/{chapter}"});
        let dune = complete(
            &client,
            template.clone(),
            "chapter",
            "4",
            Some(json!({"title": "Dune"})),
        )
        .await;
        assert_eq!(
            dune.values,
            ["4", "40", "41", "42", "43", "44", "45", "46", "47", "48"]
        );
        let emma = complete(
            &client,
            template,
            "chapter",
            "",
            Some(json!({"title": "Emma"})),
        )
        .await;
        assert_eq!(emma.values, ["1", "2", "3"], "{:?}", client.era());
        client.close().await;
    }
}

#[tokio::test]
async fn the_hundred_value_cap_applies_to_every_completer() {
    for builder in builders() {
        let client = builder.connect(server()).await.unwrap();
        let done = complete(
            &client,
            json!({"type": "ref/prompt", "name": "pick"}),
            "n",
            "7",
            None,
        )
        .await;
        assert_eq!(done.values.len(), 100, "{:?}", client.era());
        assert_eq!(done.values[..2], ["70", "71"]);
        assert_eq!((done.total, done.has_more), (Some(250), Some(true)));
        client.close().await;
    }
}

#[tokio::test]
async fn a_hand_built_resource_takes_a_closure_completer() {
    let template = ResourceDef::<()>::new("notes://{id}", "note", |_, uri, _| async move {
        Ok(ReadResourceResult::new(vec![ResourceContents::text(
            uri, "a note",
        )]))
    })
    .unwrap()
    .complete("id", |req: CompletionRequest| {
        vec![format!("{}-{}", req.argument, req.value)]
    });
    let client = Client::connect(McpServer::new("notes").resource(template))
        .await
        .unwrap();
    let done = client
        .complete(
            CompletionReference::Resource {
                uri: "notes://{id}".into(),
            },
            "id",
            "7",
        )
        .await
        .unwrap();
    assert_eq!(done.completion.values, ["id-7"]);
    client.close().await;
}

//! One state value for every tool, resource and prompt: `McpServer::with_state`, the
//! `State<S>` parameter, and `#[resource]`/`#[prompt]` methods of a `#[tools]` impl sharing
//! `&self` with its tools. Through the in-memory client, in both eras.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use modelctx::prelude::*;
use modelctx::server::State;
use modelctx::transport::{ChildProcess, Stderr};
use modelctx::types::*;
use serde_json::json;

mod support;

/// The shop's state, shared by every handler.
struct Shop {
    books: Mutex<Vec<String>>,
    visits: AtomicU32,
}

impl Shop {
    fn new() -> Self {
        Self {
            books: Mutex::new(vec!["Dune".into(), "Emma".into()]),
            visits: AtomicU32::new(0),
        }
    }
}

/// Adds a book.
#[tool]
async fn add_book(shop: State<Shop>, title: String) -> usize {
    let mut books = shop.books.lock().unwrap();
    books.push(title);
    books.len()
}

/// The books, one per line.
#[resource("shop://books", mime_type = "text/plain")]
async fn books(shop: State<Shop>) -> String {
    shop.visits.fetch_add(1, Ordering::SeqCst);
    shop.books.lock().unwrap().join("\n")
}

/// Asks for a review of the shop's first book.
#[prompt]
fn review_first(State(shop): State<Shop>, ctx: RequestContext<Shop>) -> String {
    // `State` and the context see the same value.
    assert!(std::ptr::eq(&*shop, ctx.state()));
    format!("Review {}.", shop.books.lock().unwrap()[0])
}

fn state_server() -> McpServer<Shop> {
    McpServer::with_state("shop", Shop::new())
        .tool(AddBookTool)
        .resource(BooksResource)
        .prompt(ReviewFirstPrompt)
}

fn text_of(result: &ReadResourceResult) -> String {
    match &result.contents[0] {
        ResourceContents::Text(t) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

#[tokio::test]
async fn with_state_reaches_tools_resources_and_prompts_in_both_eras() {
    for builder in [Client::builder(), Client::builder().legacy()] {
        let client = builder.connect(state_server()).await.unwrap();
        let added = client
            .call_tool("add_book", json!({"title": "Ulysses"}))
            .await
            .unwrap();
        // A number is wrapped as `{"result": ..}` for 2025 clients, whose schema wants objects.
        let expected = match client.era() {
            Era::Legacy => json!({"result": 3}),
            _ => json!(3),
        };
        assert_eq!(added.structured_content, Some(expected));
        let listed = client.read_resource("shop://books").await.unwrap();
        assert_eq!(text_of(&listed), "Dune\nEmma\nUlysses");
        let prompt = client
            .get_prompt("review_first", BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(
            prompt.messages[0].content.as_text(),
            Some("Review Dune."),
            "{:?}",
            client.era()
        );
        // `State` is no argument: the schema shows `title` only.
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(
            tools[0].input_schema["properties"],
            json!({"title": {"type": "string"}})
        );
        client.close().await;
    }
}

/// A bookshop whose tools, resources and prompts share `&self`.
struct Bookshop {
    books: Mutex<Vec<String>>,
}

#[tools]
impl Bookshop {
    /// Adds a book.
    #[tool]
    async fn shelve(&self, title: String) -> usize {
        let mut books = self.books.lock().unwrap();
        books.push(title);
        books.len()
    }

    /// One book by its position (from 0).
    #[resource("shelf://{index}", mime_type = "text/plain")]
    async fn shelf(&self, #[arg(complete = Self::positions)] index: usize) -> Option<String> {
        self.books.lock().unwrap().get(index).cloned()
    }

    /// The number of books, as text (a blocking method).
    #[resource("shelf://count")]
    fn count(&self) -> String {
        self.books.lock().unwrap().len().to_string()
    }

    /// Asks for a summary of one book.
    #[prompt(name = "summarize")]
    async fn summary_prompt(
        &self,
        /// The title.
        #[arg(complete = Self::titles)]
        title: String,
        /// How long the summary should be.
        #[arg(complete = Self::lengths)]
        length: Option<String>,
    ) -> String {
        let known = self.books.lock().unwrap().contains(&title);
        let length = length.unwrap_or_else(|| "short".into());
        format!("Summarize {title} (in stock: {known}), {length}.")
    }

    /// Completes a shelf position (plain, from the typed text).
    fn positions(&self, prefix: &str) -> Vec<String> {
        let count = self.books.lock().unwrap().len();
        (0..count)
            .map(|i| i.to_string())
            .filter(|i| i.starts_with(prefix))
            .collect()
    }

    /// Completes a title (async, from the typed text).
    async fn titles(&self, prefix: &str) -> Vec<String> {
        tokio::task::yield_now().await;
        let books = self.books.lock().unwrap();
        books
            .iter()
            .filter(|t| t.starts_with(prefix))
            .cloned()
            .collect()
    }

    /// Completes a length from the title already chosen (async, the whole request).
    async fn lengths(&self, request: modelctx::server::CompletionRequest) -> Vec<String> {
        let long_book = request.arguments.get("title").map(String::as_str) == Some("Dune");
        let mut lengths = vec!["short".to_owned()];
        if long_book {
            lengths.push("chapter by chapter".into());
        }
        lengths
    }

    /// A prompt that needs no shop (an associated function).
    #[prompt]
    fn greeting() -> String {
        "Say hello.".into()
    }
}

fn method_server() -> McpServer {
    McpServer::new("bookshop").tools(Bookshop {
        books: Mutex::new(vec!["Dune".into()]),
    })
}

#[tokio::test]
async fn resource_and_prompt_methods_share_self_with_the_tools() {
    for builder in [Client::builder(), Client::builder().legacy()] {
        let client = builder.connect(method_server()).await.unwrap();
        let era = client.era();
        client
            .call_tool("shelve", json!({"title": "Emma"}))
            .await
            .unwrap();
        let second = client.read_resource("shelf://1").await.unwrap();
        assert_eq!(text_of(&second), "Emma", "{era:?}");
        let count = client.read_resource("shelf://count").await.unwrap();
        assert_eq!(text_of(&count), "2", "{era:?}");
        let missing = client.read_resource("shelf://7").await.unwrap_err();
        let not_found = if era == Era::Legacy { -32002 } else { -32602 };
        assert_eq!(missing.code(), not_found, "{era:?}");
        assert_eq!(missing.message(), "Resource not found");

        let args = BTreeMap::from([("title".to_owned(), "Emma".to_owned())]);
        let prompt = client.get_prompt("summarize", args).await.unwrap();
        assert_eq!(
            prompt.messages[0].content.as_text(),
            Some("Summarize Emma (in stock: true), short."),
            "{era:?}"
        );
        let hello = client
            .get_prompt("greeting", BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(hello.messages[0].content.as_text(), Some("Say hello."));

        // Completers that are `&self` methods: plain, async, and one reading another argument.
        let values = |r: CompleteResult| r.completion.values;
        let positions = client
            .complete(
                CompletionReference::resource("shelf://{index}"),
                "index",
                "",
            )
            .await
            .unwrap();
        assert_eq!(values(positions), ["0", "1"], "{era:?}");
        let titles = client
            .complete(CompletionReference::prompt("summarize"), "title", "E")
            .await
            .unwrap();
        assert_eq!(values(titles), ["Emma"], "{era:?}");
        let dune = BTreeMap::from([("title".to_owned(), "Dune".to_owned())]);
        let lengths = client
            .complete_with_context(
                CompletionReference::prompt("summarize"),
                "length",
                "",
                &dune,
            )
            .await
            .unwrap();
        assert_eq!(values(lengths), ["short", "chapter by chapter"], "{era:?}");
        let no_context = client
            .complete(CompletionReference::prompt("summarize"), "length", "")
            .await
            .unwrap();
        assert_eq!(values(no_context), ["short"], "{era:?}");

        let prompts = client.list_all_prompts().await.unwrap();
        let names: Vec<_> = prompts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["summarize", "greeting"], "{era:?}");
        assert_eq!(prompts[0].arguments.as_ref().unwrap()[0].name, "title");
        let templates = client.list_all_resource_templates().await.unwrap();
        assert_eq!(templates[0].uri_template, "shelf://{index}");
        let resources = client.list_all_resources().await.unwrap();
        assert_eq!(resources[0].uri, "shelf://count");
        client.close().await;
    }
}

/// The bookshop example over stdio: its tools, resource template and prompt are methods of one
/// `#[tools]` impl, registered once; the resource sees the book a tool added.
#[tokio::test]
async fn the_bookshop_example_serves_methods_over_stdio_in_both_eras() {
    for builder in [Client::builder(), Client::builder().legacy()] {
        let child = ChildProcess::new(support::example("bookshop")).stderr(Stderr::Discard);
        let client = builder.connect(child).await.unwrap();
        let era = client.era();
        let templates = client.list_all_resource_templates().await.unwrap();
        assert_eq!(
            templates[0].uri_template, "books://by-year/{year}",
            "{era:?}"
        );
        let added = client
            .call_tool(
                "add_book",
                json!({"title": "Emma", "author": "Jane Austen", "year": 1815}),
            )
            .await
            .unwrap();
        assert!(!added.is_error, "{era:?}");
        let year = client.read_resource("books://by-year/1815").await.unwrap();
        let books: serde_json::Value = serde_json::from_str(&text_of(&year)).unwrap();
        assert_eq!(
            books,
            json!([{"title": "Emma", "author": "Jane Austen", "year": 1815}])
        );
        let args = BTreeMap::from([("author".to_owned(), "Frank Herbert".to_owned())]);
        let prompt = client.get_prompt("recommend", args).await.unwrap();
        assert_eq!(
            prompt.messages[0].content.as_text(),
            Some("Which of these books by Frank Herbert should I read first: Dune, Dune Messiah?"),
            "{era:?}"
        );
        // The prompt's `author` completes from the shop's books (a `&self` method), including
        // the one just added.
        let authors = client
            .complete(CompletionReference::prompt("recommend"), "author", "")
            .await
            .unwrap();
        assert_eq!(
            authors.completion.values,
            ["Frank Herbert", "Ursula K. Le Guin", "Jane Austen"],
            "{era:?}"
        );
        let missing = client
            .read_resource("books://by-year/1700")
            .await
            .unwrap_err();
        assert_eq!(missing.message(), "Resource not found", "{era:?}");
        client.close().await;
    }
}

/// Parameters may be named like their function (the function is bound before the arguments).
#[tool]
async fn echo(echo: String) -> String {
    echo
}

/// A user's page.
#[resource("users://{user}")]
async fn user(user: String) -> String {
    format!("page of {user}")
}

/// Talks about a topic.
#[prompt]
fn topic(topic: String) -> String {
    format!("Talk about {topic}.")
}

#[tokio::test]
async fn a_parameter_may_be_named_like_its_function() {
    let server = McpServer::new("names")
        .tool(EchoTool)
        .resource(UserResource)
        .prompt(TopicPrompt);
    let client = Client::connect(server).await.unwrap();
    let echoed = client
        .call_tool("echo", json!({"echo": "hi"}))
        .await
        .unwrap();
    assert_eq!(echoed.content[0].as_text(), Some("hi"));
    let page = client.read_resource("users://ada").await.unwrap();
    assert_eq!(text_of(&page), "page of ada");
    let args = BTreeMap::from([("topic".to_owned(), "tea".to_owned())]);
    let prompt = client.get_prompt("topic", args).await.unwrap();
    assert_eq!(
        prompt.messages[0].content.as_text(),
        Some("Talk about tea.")
    );
    client.close().await;
}

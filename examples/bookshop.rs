//! The bookshop of the seeds, high level: two tools, a resource template and a prompt sharing
//! one state value as `&self` methods of one `#[tools]` impl block (registered once, with
//! `.tools(..)`), argument constraints from `#[arg]`, a structured result from a
//! `Serialize + JsonSchema` type.
//!
//! Run: `cargo run --example bookshop` (serves over stdio), or
//! `cargo run --example bookshop -- --http 127.0.0.1:8080` (Streamable HTTP at `/mcp`).

use std::sync::Mutex;

use modelctx::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A book in the catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Book {
    /// The title.
    pub title: String,
    /// Who wrote it.
    pub author: String,
    /// Year of first publication.
    pub year: i32,
}

/// The shop's state, shared by its tools, resources and prompts.
#[derive(Debug)]
pub struct Bookshop {
    books: Mutex<Vec<Book>>,
}

impl Bookshop {
    /// A shop with three books.
    pub fn new() -> Self {
        let book = |title: &str, author: &str, year| Book {
            title: title.into(),
            author: author.into(),
            year,
        };
        Self {
            books: Mutex::new(vec![
                book("Dune", "Frank Herbert", 1965),
                book("Dune Messiah", "Frank Herbert", 1969),
                book("The Left Hand of Darkness", "Ursula K. Le Guin", 1969),
            ]),
        }
    }
}

impl Default for Bookshop {
    fn default() -> Self {
        Self::new()
    }
}

#[tools]
impl Bookshop {
    /// Search the catalog by title or author.
    #[tool(read_only)]
    async fn search_books(
        &self,
        /// Words to look for in titles and authors.
        query: String,
        /// At most this many books (1 to 50).
        #[arg(range(1..=50), default = 10)]
        limit: u32,
    ) -> Vec<Book> {
        let query = query.to_lowercase();
        let books = self.books.lock().unwrap_or_else(|p| p.into_inner());
        books
            .iter()
            .filter(|b| {
                b.title.to_lowercase().contains(&query) || b.author.to_lowercase().contains(&query)
            })
            .take(limit as usize)
            .cloned()
            .collect()
    }

    /// Add a book to the catalog. Behind a resource server, the caller's token needs the
    /// `books:write` scope (see `examples/auth_server.rs`); elsewhere nothing is checked.
    #[tool(scopes = ["books:write"])]
    async fn add_book(
        &self,
        /// The title.
        #[arg(length(1..=200))]
        title: String,
        /// Who wrote it.
        author: String,
        /// Year of first publication.
        year: i32,
    ) -> Result<String, ToolError> {
        let mut books = self.books.lock().unwrap_or_else(|p| p.into_inner());
        if books.iter().any(|b| b.title == title) {
            return Err(ToolError::new(format!(
                "'{title}' is already in the catalog"
            )));
        }
        let text = format!("Added '{title}' by {author} ({year}).");
        books.push(Book {
            title,
            author,
            year,
        });
        Ok(text)
    }

    /// The books first published in one year, as JSON.
    #[resource("books://by-year/{year}", mime_type = "application/json")]
    async fn books_of_year(&self, year: i32) -> Option<String> {
        let books = self.books.lock().unwrap_or_else(|p| p.into_inner());
        let found: Vec<&Book> = books.iter().filter(|b| b.year == year).collect();
        if found.is_empty() {
            return None;
        }
        serde_json::to_string(&found).ok()
    }

    /// The authors whose names start with `prefix` (completes the `recommend` prompt's
    /// `author`: a `&self` method named as `Self::authors`).
    fn authors(&self, prefix: &str) -> Vec<String> {
        let books = self.books.lock().unwrap_or_else(|p| p.into_inner());
        let mut authors: Vec<String> = Vec::new();
        for book in books.iter().filter(|b| b.author.starts_with(prefix)) {
            if !authors.contains(&book.author) {
                authors.push(book.author.clone());
            }
        }
        authors
    }

    /// Ask for a recommendation among the books of one author.
    #[prompt(title = "Recommend a book")]
    async fn recommend(
        &self,
        /// The author whose books to choose from.
        #[arg(complete = Self::authors)]
        author: String,
    ) -> String {
        let books = self.books.lock().unwrap_or_else(|p| p.into_inner());
        let titles: Vec<&str> = books
            .iter()
            .filter(|b| b.author == author)
            .map(|b| b.title.as_str())
            .collect();
        match titles.as_slice() {
            [] => format!("We have no books by {author}. Suggest another author."),
            _ => format!(
                "Which of these books by {author} should I read first: {}?",
                titles.join(", ")
            ),
        }
    }
}

/// The server of this example.
pub fn server() -> McpServer {
    McpServer::new("Bookshop")
        .version("1.0.0")
        .tools(Bookshop::new())
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next()) {
        (Some("--http"), Some(addr)) => {
            let addr: std::net::SocketAddr = addr
                .parse()
                .map_err(|e| McpError::internal(format!("--http {addr}: {e}")))?;
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!("bookshop at http://{}/mcp", listener.local_addr()?);
            server()
                .serve_http_on(
                    listener,
                    modelctx::transport::HttpConfig::default(),
                    std::future::pending(),
                )
                .await
        }
        _ => server().serve_stdio().await,
    }
}

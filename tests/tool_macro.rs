//! `#[tool]` / `#[tools]` and the high-level server through the in-memory client, both eras.

#[allow(unreachable_pub)] // the example program's items are `pub` for this test to reach
#[path = "../examples/bookshop.rs"]
mod bookshop;

use modelctx::prelude::*;
use serde_json::{json, Value};

fn text(result: &CallToolResult) -> &str {
    result.content[0].as_text().unwrap_or("")
}

#[tokio::test]
async fn the_schema_comes_from_the_signature_and_the_docs() {
    let client = Client::connect(bookshop::server()).await.unwrap();
    let listed = client.request("tools/list", json!({})).await.unwrap();
    let tools = listed["tools"].as_array().unwrap();
    let names: Vec<_> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["search_books", "add_book"], "declaration order");
    let search = &tools[0];
    assert_eq!(
        search["description"],
        "Search the catalog by title or author."
    );
    assert_eq!(search["annotations"], json!({"readOnlyHint": true}));
    assert_eq!(
        search["inputSchema"],
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words to look for in titles and authors."},
                "limit": {
                    "type": "integer", "minimum": 1, "maximum": 50,
                    "description": "At most this many books (1 to 50).", "default": 10
                }
            },
            "required": ["query"],
            "additionalProperties": false
        })
    );
    let keys: Vec<_> = search["inputSchema"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, ["query", "limit"], "properties in declaration order");
    assert_eq!(search["outputSchema"]["type"], "array");
    assert_eq!(
        search["outputSchema"]["items"],
        json!({"$ref": "#/$defs/Book"})
    );
    assert_eq!(
        search["outputSchema"]["$defs"]["Book"]["properties"]["year"]["type"],
        "integer"
    );
    assert!(
        search["outputSchema"]["$defs"]["Book"]["properties"]["year"]
            .get("format")
            .is_none()
    );
    let add = &tools[1];
    assert_eq!(add["inputSchema"]["properties"]["title"]["maxLength"], 200);
    assert_eq!(
        add["inputSchema"]["required"],
        json!(["title", "author", "year"])
    );
    assert!(
        add.get("outputSchema").is_none(),
        "a String result has no output schema"
    );
    client.close().await;
}

#[tokio::test]
async fn structured_results_carry_the_value_and_its_json_text() {
    let client = Client::connect(bookshop::server()).await.unwrap();
    let result = client
        .call_tool("search_books", json!({"query": "dune"}))
        .await
        .unwrap();
    assert!(!result.is_error);
    let books = result.structured_content.clone().unwrap();
    assert_eq!(books.as_array().unwrap().len(), 2);
    assert_eq!(books[0]["title"], "Dune");
    let as_text: Value = serde_json::from_str(text(&result)).unwrap();
    assert_eq!(as_text, books, "the same value as JSON text");
    client.close().await;

    // 2025 needs an object: the array is wrapped, and so is the schema.
    let client = Client::builder()
        .legacy()
        .connect(bookshop::server())
        .await
        .unwrap();
    let listed = client.list_tools().await.unwrap();
    let schema = listed.tools[0].output_schema.clone().unwrap();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["result"]));
    assert_eq!(schema["properties"]["result"]["type"], "array");
    let result = client
        .call_tool("search_books", json!({"query": "dune", "limit": 1}))
        .await
        .unwrap();
    assert_eq!(
        result.structured_content.unwrap()["result"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    client.close().await;
}

#[tokio::test]
async fn arguments_are_validated_against_the_listed_schema() {
    for builder in [Client::builder(), Client::builder().legacy()] {
        let client = builder.connect(bookshop::server()).await.unwrap();
        let cases = [
            (
                json!({"query": "dune", "limit": 80}),
                "limit: 80 is greater than the maximum of 50",
            ),
            (
                json!({"query": "dune", "limit": 0}),
                "limit: 0 is less than the minimum of 1",
            ),
            (json!({"limit": 5}), "\"query\" is a required property"),
            (json!({"query": 42}), "query: 42 is not of type \"string\""),
        ];
        for (args, message) in cases {
            let result = client
                .call_tool("search_books", args.clone())
                .await
                .unwrap();
            assert!(result.is_error, "{args}");
            assert_eq!(text(&result), message, "{args}");
        }
        let result = client
            .call_tool("search_books", json!({"query": "dune", "colour": "red"}))
            .await
            .unwrap();
        assert!(result.is_error);
        assert!(
            text(&result).contains("'colour' was unexpected"),
            "{}",
            text(&result)
        );

        let long = "x".repeat(5000);
        let result = client
            .call_tool(
                "add_book",
                json!({"title": long, "author": "A", "year": 2000}),
            )
            .await
            .unwrap();
        assert!(result.is_error);
        assert!(text(&result).starts_with("title: "), "{}", text(&result));
        assert!(
            text(&result).len() < 400 && text(&result).ends_with("is longer than 200 characters"),
            "a large input is never echoed whole: {}",
            text(&result)
        );
        client.close().await;
    }
}

#[tokio::test]
async fn tool_errors_unknown_tools_and_defaults() {
    let client = Client::connect(bookshop::server()).await.unwrap();
    let added = client
        .call_tool(
            "add_book",
            json!({"title": "Solaris", "author": "Stanisław Lem", "year": 1961}),
        )
        .await
        .unwrap();
    assert_eq!(text(&added), "Added 'Solaris' by Stanisław Lem (1961).");
    let again = client
        .call_tool(
            "add_book",
            json!({"title": "Solaris", "author": "Stanisław Lem", "year": 1961}),
        )
        .await
        .unwrap();
    assert!(again.is_error);
    assert_eq!(text(&again), "'Solaris' is already in the catalog");
    let found = client
        .call_tool("search_books", json!({"query": "lem"}))
        .await
        .unwrap();
    assert_eq!(
        found.structured_content.unwrap()[0]["title"],
        "Solaris",
        "state is shared"
    );
    let unknown = client.call_tool("sell_book", json!({})).await.unwrap();
    assert!(unknown.is_error);
    assert_eq!(text(&unknown), "Unknown tool: sell_book");
    client.close().await;
}

/// Where to ship an order.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct Address {
    /// Street and number.
    pub street: String,
    /// The city.
    pub city: String,
}

/// How fast to ship.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Speed {
    /// Within a week.
    Standard,
    /// Tomorrow.
    Express,
}

/// Ship an order.
#[tool]
async fn ship(
    /// Where to.
    to: Address,
    /// How fast.
    #[arg(default = Speed::Standard)]
    speed: Speed,
) -> String {
    let speed = match speed {
        Speed::Standard => "standard",
        Speed::Express => "express",
    };
    format!("{speed} to {}, {}", to.street, to.city)
}

impl serde::Serialize for Speed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match self {
            Speed::Standard => "standard",
            Speed::Express => "express",
        })
    }
}

#[tokio::test]
async fn structs_and_enums_become_defs_and_defaults_apply() {
    let client = Client::connect(McpServer::new("ship").tool(ShipTool))
        .await
        .unwrap();
    let listed = client.request("tools/list", json!({})).await.unwrap();
    let schema = &listed["tools"][0]["inputSchema"];
    assert_eq!(schema["properties"]["to"]["$ref"], "#/$defs/Address");
    assert_eq!(schema["properties"]["speed"]["$ref"], "#/$defs/Speed");
    assert_eq!(schema["properties"]["speed"]["default"], "standard");
    assert_eq!(schema["required"], json!(["to"]));
    assert_eq!(
        schema["$defs"]["Address"]["properties"]["city"]["description"],
        "The city."
    );
    assert_eq!(schema["$defs"]["Speed"]["oneOf"][1]["const"], "express");
    let shipped = client
        .call_tool(
            "ship",
            json!({"to": {"street": "1 Main St", "city": "Oslo"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        text(&shipped),
        "standard to 1 Main St, Oslo",
        "the default applies"
    );
    let bad = client
        .call_tool(
            "ship",
            json!({"to": {"street": "x", "city": "y"}, "speed": "warp"}),
        )
        .await
        .unwrap();
    assert!(bad.is_error);
    assert!(text(&bad).starts_with("speed: "), "{}", text(&bad));
    client.close().await;
}

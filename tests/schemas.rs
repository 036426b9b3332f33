//! Schemas every client accepts: optional arguments listed as their plain type (no `null`
//! alternative) while the validator still takes `null`, and `$ref`s inlined on request, through
//! the in-memory client in both eras.

use modelctx::prelude::*;
use modelctx::server::SchemaValidator;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// A place on the map.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Geo {
    lat: f64,
    lon: f64,
}

/// A postal address.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Address {
    street: String,
    city: Option<String>,
    geo: Geo,
}

/// A tree of labels (contains itself).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Tree {
    label: String,
    children: Vec<Tree>,
}

/// Echo the optional arguments.
#[tool]
async fn optional(
    /// A name.
    name: Option<String>,
    count: Option<i32>,
    /// Where.
    address: Option<Address>,
) -> String {
    format!(
        "{name:?} {count:?} {:?}",
        address.map(|a| (a.street, a.city))
    )
}

/// Ship to an address.
#[tool]
async fn ship(to: Address, tree: Tree) -> Address {
    let _ = tree;
    to
}

/// Grow a tree.
#[tool]
async fn grow(label: String) -> Tree {
    Tree {
        children: vec![Tree {
            label: format!("{label}'s child"),
            children: Vec::new(),
        }],
        label,
    }
}

/// An expression (not an object at the root, and contains itself).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
enum Expr {
    Num(f64),
    Neg(Box<Expr>),
}

/// Negate twice.
#[tool]
async fn negate(x: f64) -> Expr {
    Expr::Neg(Box::new(Expr::Neg(Box::new(Expr::Num(x)))))
}

fn server() -> McpServer {
    McpServer::new("schemas")
        .tool(OptionalTool)
        .tool(ShipTool)
        .tool(GrowTool)
        .tool(NegateTool)
}

fn builders() -> [modelctx::client::ClientBuilder; 2] {
    [Client::builder(), Client::builder().legacy()]
}

fn text(result: &CallToolResult) -> &str {
    result.content[0].as_text().unwrap_or("")
}

async fn listed(client: &Client, name: &str) -> Value {
    let tools = client.request("tools/list", json!({})).await.unwrap();
    tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .cloned()
        .unwrap()
}

fn geo() -> Value {
    json!({"type": "object", "description": "A place on the map.",
        "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
        "required": ["lat", "lon"]})
}

fn address(geo: Value) -> Value {
    json!({"type": "object", "description": "A postal address.",
        "properties": {
            "street": {"type": "string"},
            "city": {"type": "string"},
            "geo": geo
        },
        "required": ["street", "geo"]})
}

/// Every `$ref` in `value`.
fn refs(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                into.push(r.clone());
            }
            map.values().for_each(|v| refs(v, into));
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, into)),
        _ => {}
    }
}

#[tokio::test]
async fn optional_arguments_are_listed_as_their_plain_type_and_not_required() {
    for builder in builders() {
        let client = builder.connect(server()).await.unwrap();
        let tool = listed(&client, "optional").await;
        assert_eq!(
            tool["inputSchema"],
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "A name."},
                    "count": {"type": "integer"},
                    "address": {"$ref": "#/$defs/Address", "description": "Where."}
                },
                "additionalProperties": false,
                "$defs": {
                    "Address": address(json!({"$ref": "#/$defs/Geo"})),
                    "Geo": geo()
                }
            }),
            "{:?}",
            client.era()
        );
        client.close().await;
    }
}

#[tokio::test]
async fn null_and_absence_are_both_accepted_for_an_optional_argument() {
    for builder in builders() {
        let client = builder.connect(server()).await.unwrap();
        let absent = client.call_tool("optional", json!({})).await.unwrap();
        let null = client
            .call_tool(
                "optional",
                json!({"name": null, "count": null, "address": null}),
            )
            .await
            .unwrap();
        assert!(!absent.is_error && !null.is_error, "{}", text(&null));
        assert_eq!(text(&absent), "None None None");
        assert_eq!(text(&null), "None None None");
        let nested_null = client
            .call_tool(
                "optional",
                json!({"name": "Ada", "count": 3,
                    "address": {"street": "Main St", "city": null, "geo": {"lat": 1.0, "lon": 2.0}}}),
            )
            .await
            .unwrap();
        assert_eq!(
            text(&nested_null),
            "Some(\"Ada\") Some(3) Some((\"Main St\", None))",
            "a null optional field of a struct argument is accepted too"
        );
        client.close().await;
    }
}

#[tokio::test]
async fn a_wrong_type_is_refused_with_the_same_text_as_before() {
    // What the validator said when the listed schema was `["integer", "null"]`.
    let before = SchemaValidator::compile(&json!({
        "type": "object",
        "properties": {"count": {"type": ["integer", "null"]}}
    }))
    .unwrap()
    .validate(&json!({"count": "many"}))
    .unwrap_err();
    for inline in [false, true] {
        for builder in builders() {
            let client = builder
                .connect(server().inline_schema_refs(inline))
                .await
                .unwrap();
            let refused = client
                .call_tool("optional", json!({"count": "many"}))
                .await
                .unwrap();
            assert!(refused.is_error);
            assert_eq!(text(&refused), before);
            assert_eq!(
                text(&refused),
                "count: \"many\" is not of types \"null\", \"integer\""
            );
            let nested = client
                .call_tool(
                    "ship",
                    json!({"to": {"street": "x", "geo": {"lat": "north", "lon": 0}},
                        "tree": {"label": "root", "children": []}}),
                )
                .await
                .unwrap();
            assert!(nested.is_error);
            assert_eq!(
                text(&nested),
                "to.geo.lat: \"north\" is not of type \"number\""
            );
            client.close().await;
        }
    }
}

#[tokio::test]
async fn struct_arguments_refer_to_defs_by_default() {
    let client = Client::connect(server()).await.unwrap();
    let tool = listed(&client, "ship").await;
    assert_eq!(
        tool["inputSchema"]["properties"],
        json!({"to": {"$ref": "#/$defs/Address"}, "tree": {"$ref": "#/$defs/Tree"}})
    );
    let defs: Vec<&String> = tool["inputSchema"]["$defs"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(defs, ["Address", "Geo", "Tree"]);
    // The output schema describes what the server sends: its optional field stays nullable
    // (a client checking a result must accept the `null` it may carry).
    let mut output = address(json!({"$ref": "#/$defs/Geo"}));
    output["properties"]["city"] = json!({"type": ["string", "null"]});
    output["$defs"] = json!({"Geo": geo()});
    assert_eq!(tool["outputSchema"], output);
    client.close().await;
}

#[tokio::test]
async fn inlined_schemas_are_self_contained_except_for_a_recursive_type() {
    for builder in builders() {
        let client = builder
            .connect(server().inline_schema_refs(true))
            .await
            .unwrap();
        let era = client.era();
        let optional = listed(&client, "optional").await;
        assert_eq!(
            optional["inputSchema"]["properties"]["address"],
            {
                let mut a = address(geo());
                a["description"] = json!("Where.");
                a
            },
            "the argument's description wins over the type's ({era:?})"
        );
        assert!(optional["inputSchema"].get("$defs").is_none());

        let ship = listed(&client, "ship").await;
        assert_eq!(ship["inputSchema"]["properties"]["to"], address(geo()));
        assert_eq!(
            ship["inputSchema"]["properties"]["tree"],
            json!({"$ref": "#/$defs/Tree"}),
            "a recursive type keeps its $ref"
        );
        assert_eq!(
            ship["inputSchema"]["$defs"],
            json!({"Tree": {
                "type": "object", "description": "A tree of labels (contains itself).",
                "properties": {
                    "label": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
                },
                "required": ["label", "children"]
            }}),
            "$defs keeps only the recursive type"
        );
        let mut found = Vec::new();
        refs(&ship["outputSchema"], &mut found);
        refs(&optional["inputSchema"], &mut found);
        assert!(
            found.is_empty(),
            "output and input self-contained: {found:?}"
        );
        assert_eq!(ship["outputSchema"]["properties"]["geo"], geo());
        let grow = listed(&client, "grow").await;
        assert_eq!(
            grow["outputSchema"]["properties"]["children"],
            json!({"type": "array", "items": {"$ref": "#"}}),
            "a recursive root refers to itself ({era:?})"
        );
        assert!(grow["outputSchema"].get("$defs").is_none());

        // Validation is unchanged: the same calls pass.
        let shipped = client
            .call_tool(
                "ship",
                json!({"to": {"street": "Main St", "geo": {"lat": 1.5, "lon": 2.5}},
                    "tree": {"label": "root", "children": [{"label": "leaf", "children": []}]}}),
            )
            .await
            .unwrap();
        assert!(!shipped.is_error, "{}", text(&shipped));
        assert_eq!(shipped.structured_content.unwrap()["street"], "Main St");
        client.close().await;
    }
}

#[tokio::test]
async fn a_recursive_result_wrapped_for_2025_still_refers_to_itself() {
    for inline in [false, true] {
        let client = Client::builder()
            .legacy()
            .connect(server().inline_schema_refs(inline))
            .await
            .unwrap();
        let schema = listed(&client, "negate").await["outputSchema"].clone();
        let result = client.call_tool("negate", json!({"x": 1.5})).await.unwrap();
        let structured = result.structured_content.unwrap();
        assert_eq!(
            structured,
            json!({"result": {"Neg": {"Neg": {"Num": 1.5}}}})
        );
        let validator = SchemaValidator::compile(&schema).unwrap();
        assert_eq!(
            validator.validate(&structured),
            Ok(()),
            "the listed 2025 schema accepts the result: {schema}"
        );
        assert!(
            validator
                .validate(&json!({"result": {"Neg": {"Neg": "x"}}}))
                .is_err(),
            "and still checks the inner levels"
        );
        client.close().await;
    }
}

/// A hand-built tool from `ArgsSchema::finish()` is listed and validated exactly as given:
/// its `Option` argument keeps `null` in the schema and a `null` value is accepted, as before.
#[tokio::test]
async fn args_schema_for_a_hand_built_tool_is_listed_and_checked_as_given() {
    let mut args = modelctx::server::ArgsSchema::new();
    args.arg::<Option<u32>>(
        "limit",
        modelctx::server::ArgSpec {
            description: None,
            optional: true,
            default: None,
            constraints: Default::default(),
        },
    );
    let schema = args.finish();
    assert_eq!(
        schema["properties"]["limit"]["type"],
        json!(["integer", "null"])
    );
    let tool =
        modelctx::server::ToolDef::from_schema("limit", schema.clone(), |_, args| async move {
            Ok(CallToolResult::text(args["limit"].to_string()))
        })
        .unwrap();
    for builder in builders() {
        let client = builder
            .connect(McpServer::new("hand").tool(tool.clone()))
            .await
            .unwrap();
        assert_eq!(listed(&client, "limit").await["inputSchema"], schema);
        let null = client
            .call_tool("limit", json!({"limit": null}))
            .await
            .unwrap();
        assert!(!null.is_error, "{}", text(&null));
        assert_eq!(text(&null), "null");
        let wrong = client
            .call_tool("limit", json!({"limit": "ten"}))
            .await
            .unwrap();
        assert!(wrong.is_error);
        client.close().await;
    }
}

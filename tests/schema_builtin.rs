//! The built-in validator against the `jsonschema` crate: for every schema here, fixed and
//! 3,000 generated values per schema get the same verdict, and the same complaint text (a
//! single complaint word for word; several as the same set, since the two may walk a value's
//! rules in a different order).

#![cfg(all(feature = "validation", not(feature = "jsonschema")))]

use modelctx::server::SchemaValidator;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

/// A place on the map.
#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct Geo {
    lat: f64,
    lon: f64,
}

/// A postal address.
#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct Address {
    street: String,
    city: Option<String>,
    geo: Geo,
    tags: Vec<String>,
}

/// A tree of labels.
#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct Tree {
    label: String,
    children: Vec<Tree>,
}

/// An expression.
#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
enum Expr {
    Num(f64),
    Neg(Box<Expr>),
    Pair { a: i32, b: Option<u8> },
    Zero,
}

fn schemas() -> Vec<Value> {
    let mut out = vec![
        // What `#[tool]` lists for constrained arguments.
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "minimum": 1, "maximum": 50},
                "b": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
                "c": {"type": ["number", "null"], "exclusiveMinimum": 0, "exclusiveMaximum": 2.5},
                "d": {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3, "uniqueItems": true},
                "e": {"enum": ["x", "y", 3]},
                "f": {"const": {"k": [1, 2]}},
                "g": {"type": "number", "multipleOf": 0.5},
                "h": {"type": "integer", "multipleOf": 3}
            },
            "required": ["a", "b"],
            "additionalProperties": false
        }),
        json!({"type": "object", "additionalProperties": false}),
        json!({"type": "object", "properties": {"a": {"type": "string"}},
            "additionalProperties": {"type": "integer", "maximum": 5}}),
        json!({"type": "object", "minProperties": 1, "maxProperties": 2}),
        json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "boolean"}],
            "items": {"type": "null"}}),
        json!({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 10}]}),
        json!({"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 2}]}),
        json!({"allOf": [{"type": "object", "required": ["a"]}, {"properties": {"a": {"type": "boolean"}}}]}),
        json!({"not": {"type": "string"}}),
        json!({"enum": [1, 2, 3, 4, "five"]}),
        json!({"type": "string", "maxLength": 1}),
        json!({"type": "array", "maxItems": 1, "minItems": 1}),
        json!({"type": "object", "properties": {"x": false, "y": true}}),
        json!({"$defs": {"pos": {"type": "integer", "minimum": 0}},
            "type": "object", "properties": {"n": {"$ref": "#/$defs/pos"},
            "list": {"type": "array", "items": {"$ref": "#/$defs/pos"}}}}),
        json!({"type": "object", "properties": {"m": {"enum": ["phone", "email"]}},
            "if": {"properties": {"m": {"const": "phone"}}, "required": ["m"]},
            "then": {"required": ["phone"]}, "else": {"required": ["email"]}}),
        json!({"if": {"type": "integer"}, "then": {"minimum": 3}}),
        json!({"if": {"type": "string"}, "else": {"type": "boolean"}}),
        json!({"type": "array", "items": false}),
        json!({"type": "array", "prefixItems": [{"type": "integer"}], "items": false}),
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
        json!({"not": true}),
        json!({"required": ["a", "b"], "minimum": 1.5, "maxLength": 0}),
        json!({"const": null}),
        json!({"type": "integer", "exclusiveMinimum": -1.5, "multipleOf": 4}),
        json!({"enum": [[1, 2], {"a": null}, 2.5, "x"]}),
        json!({"anyOf": [{"required": ["a"]}, {"required": ["zz"]}], "allOf": [true, {"maxProperties": 1}]}),
        json!({"uniqueItems": true, "maxItems": 100}),
        json!({"$ref": "#/$defs/n", "maximum": 10, "$defs": {"n": {"type": "integer", "minimum": 0}}}),
        json!({"type": "object", "properties": {"next": {"$ref": "#"}, "v": {"type": "string"}}}),
        json!(false),
        json!(true),
    ];
    for schema in [
        schemars::schema_for!(Address),
        schemars::schema_for!(Tree),
        schemars::schema_for!(Expr),
    ] {
        out.push(schema.to_value());
    }
    out
}

/// What `SchemaValidator` writes for one `jsonschema` error: the path, then the message with
/// the offending value cut to 256 bytes, the whole cut to 512 (as its README promises).
fn described(pointer: &str, instance: &Value, message: &str) -> String {
    let shown = instance.to_string();
    let message = message.replace(&shown, &cut(&shown, 256));
    let path = pointer.trim_start_matches('/').replace('/', ".");
    let text = if path.is_empty() {
        message
    } else {
        format!("{}: {message}", cut(&path, 256))
    };
    cut(&text, 512)
}

fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &text[..end], text.len())
}

/// A small deterministic generator (xorshift), so a failure reproduces.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn value(&mut self, keys: &[String], depth: u32) -> Value {
        let pick = if depth >= 3 {
            self.below(5)
        } else {
            self.below(8)
        };
        match pick {
            0 => Value::Null,
            1 => Value::Bool(self.below(2) == 0),
            2 => self.number(),
            3 | 4 => {
                let len = self.below(7);
                let alphabet = ['a', 'b', 'z', 'Q', '9', 'é', '-', ' '];
                Value::String((0..len).map(|_| alphabet[self.below(8) as usize]).collect())
            }
            5 => Value::Array(
                (0..self.below(5))
                    .map(|_| self.value(keys, depth + 1))
                    .collect(),
            ),
            _ => {
                let mut map = Map::new();
                for _ in 0..self.below(5) {
                    let key = if !keys.is_empty() && self.below(4) != 0 {
                        keys[self.below(keys.len() as u64) as usize].clone()
                    } else {
                        ["zz", "other", "a/b"][self.below(3) as usize].to_owned()
                    };
                    let member = self.value(keys, depth + 1);
                    map.insert(key, member);
                }
                Value::Object(map)
            }
        }
    }

    fn number(&mut self) -> Value {
        match self.below(7) {
            0 => json!(self.below(60) as i64 - 5),
            1 => json!(self.below(8) as f64 * 0.25),
            2 => json!(-(self.below(1000) as f64) / 7.0),
            3 => json!(u64::MAX - self.below(3)),
            4 => json!(i64::MIN + self.below(3) as i64),
            5 => json!(self.below(4) as f64),
            _ => json!(self.below(100) as f64 * 0.1),
        }
    }
}

/// Every property name a schema mentions, so generated objects hit its rules.
fn property_names(schema: &Value, into: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (keyword, value) in map {
                if keyword == "properties" || keyword == "$defs" {
                    if let Value::Object(props) = value {
                        into.extend(props.keys().cloned());
                    }
                }
                if keyword == "required" {
                    if let Value::Array(names) = value {
                        into.extend(names.iter().filter_map(|n| n.as_str().map(str::to_owned)));
                    }
                }
                property_names(value, into);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| property_names(v, into)),
        _ => {}
    }
}

fn fixed_values() -> Vec<Value> {
    let long = |extra: Value| {
        let mut items: Vec<Value> = (0..40).map(|i| json!({"a": i, "b": [i, "x"]})).collect();
        items.push(extra);
        Value::Array(items)
    };
    vec![
        long(json!({"b": [3.0, "x"], "a": 3})),
        long(json!({"b": [3.5, "x"], "a": 3})),
        json!((0..40).chain([7]).collect::<Vec<i32>>()),
        json!({"next": {"next": {"v": 1}}, "v": "top"}),
        json!({"a": 80, "b": "abc"}),
        json!({"a": 0, "b": "A"}),
        json!({"a": 1}),
        json!({"a": 1.0, "b": "ab", "c": 2.5, "d": [1, 1], "e": "w", "f": {"k": [1, 2.0]}}),
        json!({"a": 5, "b": "abcdef", "g": 0.75, "h": 10, "zz": 1}),
        json!({"a": 5, "b": "ab", "c": null, "d": [], "g": 1.5, "h": -9}),
        json!({"to": 1}),
        json!(["x", true, null, null]),
        json!(["x", "y"]),
        json!({"label": "root", "children": [{"label": 5, "children": []}]}),
        json!({"Neg": {"Pair": {"a": 1, "b": 300}}}),
        json!("Zero"),
        json!({"Num": "x"}),
        json!({"street": "s", "geo": {"lat": 1}, "tags": ["a", 2]}),
        json!({"n": -1, "list": [1, -2, 3]}),
        json!(9007199254740993u64),
        json!([1, 1.0]),
        json!({"x": 1}),
        json!({}),
        json!(12),
        json!(1.5),
        json!("five"),
        json!({"m": "phone", "email": "x"}),
        json!({"m": "email", "phone": "x"}),
        json!({"phone": 1}),
        json!(true),
    ]
}

#[test]
fn the_builtin_validator_agrees_with_jsonschema() {
    let mut generator = Gen(0x9E37_79B9_7F4A_7C15);
    let mut compared = 0;
    let mut complaints = 0;
    for schema in schemas() {
        let ours = SchemaValidator::compile(&schema).unwrap();
        let theirs = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&schema)
            .unwrap();
        let mut keys = Vec::new();
        property_names(&schema, &mut keys);
        let mut values = fixed_values();
        values.extend((0..3000).map(|_| generator.value(&keys, 0)));
        for value in values {
            let expected: Vec<String> = theirs
                .iter_errors(&value)
                .map(|e| described(&e.instance_path().to_string(), e.instance(), &e.to_string()))
                .collect();
            let got = ours.validate(&value);
            compared += 1;
            match (&got, expected.as_slice()) {
                (Ok(()), []) => {}
                (Err(text), [one]) => assert_eq!(text, one, "schema {schema}\nvalue {value}"),
                (Err(text), several) if several.len() <= 5 => {
                    let mut ours: Vec<&str> = text.split("; ").collect();
                    let mut theirs: Vec<&str> = several.iter().map(String::as_str).collect();
                    ours.sort_unstable();
                    ours.dedup();
                    theirs.sort_unstable();
                    theirs.dedup();
                    assert_eq!(ours, theirs, "schema {schema}\nvalue {value}");
                }
                (Err(_), _) => {}
                _ => panic!("verdicts differ: ours {got:?}, jsonschema {expected:?}\nschema {schema}\nvalue {value}"),
            }
            if got.is_err() {
                complaints += 1;
            }
        }
    }
    assert!(compared > 50_000, "{compared}");
    assert!(
        complaints > compared / 4,
        "the values break rules often enough: {complaints} of {compared}"
    );
}

#[test]
fn a_schema_beyond_the_builtin_validator_is_refused_by_name_without_the_jsonschema_feature() {
    for (schema, named) in [
        (
            json!({"contains": {"type": "string"}}),
            "the keyword `contains`",
        ),
        (
            json!({"patternProperties": {"^x": {"type": "integer"}}}),
            "the keyword `patternProperties`",
        ),
        (
            json!({"$ref": "https://example.com/other.json"}),
            "the `$ref` \"https://example.com/other.json\"",
        ),
        (
            json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
            "`$schema`",
        ),
        (
            json!({"type": "string", "pattern": "(?<=a)b"}),
            "the `pattern` \"(?<=a)b\"",
        ),
    ] {
        let error = SchemaValidator::compile(&schema).unwrap_err();
        let text = error.to_string();
        assert!(text.contains(named), "{text}");
        assert!(text.contains("enable the `jsonschema` feature"), "{text}");
    }
    let invalid = SchemaValidator::compile(&json!({"type": 5})).unwrap_err();
    assert!(
        invalid.to_string().contains("invalid JSON Schema"),
        "{invalid}"
    );
}

#[test]
fn a_recursive_schema_is_checked_at_every_depth_and_a_self_loop_is_refused() {
    let tree = SchemaValidator::compile(&schemars::schema_for!(Tree).to_value()).unwrap();
    let mut deep = json!({"label": "leaf", "children": []});
    for _ in 0..50 {
        deep = json!({"label": "node", "children": [deep]});
    }
    assert_eq!(tree.validate(&deep), Ok(()));
    let mut bad = json!({"label": 7, "children": []});
    for _ in 0..3 {
        bad = json!({"label": "node", "children": [bad]});
    }
    assert_eq!(
        tree.validate(&bad).unwrap_err(),
        "children.0.children.0.children.0.label: 7 is not of type \"string\""
    );
    let looped = SchemaValidator::compile(&json!({"$defs": {"a": {"$ref": "#/$defs/b"},
        "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}));
    assert!(looped
        .unwrap_err()
        .to_string()
        .contains("refers back to itself"));
}

#[test]
fn a_long_list_is_checked_for_duplicates_with_numbers_compared_by_value() {
    let unique = SchemaValidator::compile(&json!({"type": "array", "uniqueItems": true})).unwrap();
    let distinct: Vec<Value> = (0..50_000).map(|i| json!({"n": i})).collect();
    assert_eq!(unique.validate(&Value::Array(distinct.clone())), Ok(()));
    let mut repeated = distinct;
    repeated.push(json!({"n": 17.0}));
    let refused = unique.validate(&Value::Array(repeated)).unwrap_err();
    assert!(refused.ends_with(" has non-unique elements"), "{refused}");
    assert!(
        refused.len() < 400,
        "the list is quoted cut: {}",
        refused.len()
    );
}

/// A client checks a tool's results against its output schema when its validator reads the
/// schema; a server's schema it cannot read (here `patternProperties`, without the `jsonschema`
/// feature) is logged and that tool's results pass unchecked, not refused.
#[tokio::test]
async fn the_client_checks_output_it_can_read_and_passes_the_rest_unchecked() {
    use modelctx::prelude::*;
    use modelctx::types::ListToolsResult;
    let mut server = modelctx::lowlevel::Server::new("outputs");
    server.on_list_tools(|_, _| async {
        Ok(serde_json::from_value::<ListToolsResult>(json!({"tools": [
            {"name": "strict", "inputSchema": {"type": "object"},
             "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}},
            {"name": "open", "inputSchema": {"type": "object"},
             "outputSchema": {"type": "object", "patternProperties": {"^n": {"type": "integer"}}}}
        ]}))
        .unwrap())
    });
    server.on_call_tool(|_, _| async {
        Ok(serde_json::from_value::<CallToolResult>(json!({
            "content": [{"type": "text", "text": "{\"n\":\"x\"}"}],
            "structuredContent": {"n": "x"}
        }))
        .unwrap())
    });
    let client = Client::connect(server).await.unwrap();
    let strict = client.call_tool("strict", json!({})).await.unwrap_err();
    assert!(
        strict
            .to_string()
            .contains("Invalid structured content returned by tool strict: n: \"x\" is not of type \"integer\""),
        "{strict}"
    );
    let open = client.call_tool("open", json!({})).await.unwrap();
    assert_eq!(open.structured_content, Some(json!({"n": "x"})));
    client.close().await;
}

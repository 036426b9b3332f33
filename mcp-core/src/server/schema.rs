//! Building a tool's input schema from its parameters, and an output schema from its return
//! type, with schemars (JSON Schema 2020-12).
//!
//! The input schema is a closed object: `type: object`, properties in declaration order,
//! `required` for parameters that are neither `Option` nor defaulted, `additionalProperties:
//! false`, named types under `$defs`. Generator artefacts a model does not need (`format:
//! "uint32"` and the like) are removed. An optional argument or field is listed as its plain
//! type, left out of `required` (not as `"type": [T, "null"]`, which some clients refuse);
//! the validator still accepts `null` for it (see [`ArgsSchema`]).

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value};

/// Formats schemars emits for Rust numeric types; not JSON Schema formats, so dropped.
const RUST_NUMBER_FORMATS: &[&str] = &[
    "int", "int8", "int16", "int32", "int64", "int128", "uint", "uint8", "uint16", "uint32",
    "uint64", "uint128", "float", "double",
];

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12().into_generator()
}

/// How one parameter appears in the schema.
#[derive(Debug, Default, Clone)]
pub struct ArgSpec {
    /// The parameter's doc comment.
    pub description: Option<String>,
    /// Not in `required` (an `Option<T>` parameter, or one with a default).
    pub optional: bool,
    /// Shown as `"default"`.
    pub default: Option<Value>,
    /// Keywords merged into the property (`minimum`, `maxLength`, `pattern`, ...).
    pub constraints: Map<String, Value>,
}

/// Collects the parameters of one tool into its input schema.
///
/// Two forms come out of it. The **listed** form (what a `#[tool]`'s `tools/list` entry
/// shows) writes an optional argument, and an optional field of a struct argument at any
/// depth, as its plain type outside `required`: `{"type": "string"}`, not `{"type":
/// ["string", "null"]}` nor `anyOf` with `null`, which some clients refuse. The **validated**
/// form is the schema as schemars generates it, where an `Option<T>` also accepts `null`: a
/// `#[tool]` checks calls against that one, so a client that sends `"limit": null` for an
/// `Option<u32>` argument is answered as before (the argument is `None`), and a wrong type is
/// refused with the same text as before. The two differ only there; every other keyword is the
/// same in both. [`finish`](Self::finish) returns the validated form: given to
/// `ToolDef::from_schema`, it is listed and checked exactly as it is.
///
/// ```
/// use modelctx_core::server::{ArgSpec, ArgsSchema};
/// use serde_json::json;
///
/// let mut schema = ArgsSchema::new();
/// schema.arg::<String>("query", ArgSpec { description: Some("Words.".into()), ..Default::default() });
/// schema.arg::<u32>("limit", ArgSpec { optional: true, ..Default::default() });
/// assert_eq!(schema.finish(), json!({
///     "type": "object",
///     "properties": {
///         "query": {"type": "string", "description": "Words."},
///         "limit": {"type": "integer", "minimum": 0}
///     },
///     "required": ["query"],
///     "additionalProperties": false
/// }));
/// ```
#[derive(Debug)]
pub struct ArgsSchema {
    generator: SchemaGenerator,
    properties: Map<String, Value>,
    required: Vec<Value>,
    /// Every parameter so far may be decoded straight from the client's text (see
    /// [`Arguments`](super::Arguments)).
    straight: bool,
}

impl Default for ArgsSchema {
    fn default() -> Self {
        Self::new()
    }
}

impl ArgsSchema {
    /// An empty argument list.
    pub fn new() -> Self {
        Self {
            generator: generator(),
            properties: Map::new(),
            required: Vec::new(),
            straight: true,
        }
    }

    /// Adds parameter `name` of type `T` (for an `Option<U>` parameter pass `U` and
    /// `optional: true`).
    pub fn arg<T: JsonSchema>(&mut self, name: &str, spec: ArgSpec) {
        self.arg_of_tool::<T>(name, spec, false);
    }

    /// [`arg`](Self::arg) for a `#[tool]`'s parameter, which says whether its argument may be
    /// decoded straight from the client's text.
    pub(crate) fn arg_of_tool<T: JsonSchema>(&mut self, name: &str, spec: ArgSpec, straight: bool) {
        self.straight &= straight;
        let mut property = object_schema(self.generator.subschema_for::<T>().to_value());
        if let Value::Object(map) = &mut property {
            if let Some(description) = spec.description {
                map.insert("description".into(), Value::String(description));
            }
            if let Some(default) = spec.default {
                map.insert("default".into(), default);
            }
            map.extend(spec.constraints);
        }
        if !spec.optional {
            self.required.push(Value::String(name.to_owned()));
        }
        self.properties.insert(name.to_owned(), property);
    }

    /// The finished schema, as calls are checked against it: an `Option` argument added as
    /// `Option<T>` accepts `null`. (A `#[tool]` lists the same schema with those `null`s left
    /// out, which more clients accept; give this one to `ToolDef::from_schema` and it is listed
    /// and validated as it is.)
    pub fn finish(self) -> Value {
        self.build().1
    }

    /// The parameters, when every argument may be decoded straight from the client's text.
    pub(crate) fn decoded_straight(&self) -> Option<Box<[Box<str>]>> {
        self.straight.then(|| {
            self.properties
                .keys()
                .map(|name| name.as_str().into())
                .collect()
        })
    }

    /// The listed form and the validated form (as generated: `Option`s accept `null`).
    pub(crate) fn build(mut self) -> (Value, Value) {
        let mut root = Map::new();
        root.insert("type".into(), Value::String("object".into()));
        root.insert("properties".into(), Value::Object(self.properties));
        if !self.required.is_empty() {
            root.insert("required".into(), Value::Array(self.required));
        }
        root.insert("additionalProperties".into(), Value::Bool(false));
        let defs = self.generator.take_definitions(true);
        if !defs.is_empty() {
            root.insert("$defs".into(), Value::Object(defs));
        }
        let mut validated = Value::Object(root);
        strip_artefacts(&mut validated);
        let mut listed = validated.clone();
        super::listed_schema::drop_optional_nulls(&mut listed);
        (listed, validated)
    }
}

/// The output schema of `T` and whether it is an object at the root (after `$ref`s).
pub fn output_schema<T: JsonSchema>() -> (Value, bool) {
    let mut generator = generator();
    let mut schema = object_schema(generator.root_schema_for::<T>().to_value());
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
        map.remove("title");
    }
    strip_artefacts(&mut schema);
    let is_object = schema_is_object(&schema);
    (schema, is_object)
}

/// `true` (any value) as `{}`: MCP wants schema objects, and an object can carry a description.
fn object_schema(schema: Value) -> Value {
    match schema {
        Value::Bool(true) => Value::Object(Map::new()),
        other => other,
    }
}

fn schema_is_object(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        _ => schema.get("properties").is_some(),
    }
}

/// Wraps a non-object output schema as `{"result": <schema>}` (what a 2025 client needs).
/// `$defs` stay at the root; a reference to the root itself (a recursive type, `"$ref": "#"`)
/// is rewritten to `#/properties/result`.
pub fn wrap_output_schema(schema: &Value) -> Value {
    let mut inner = schema.clone();
    super::listed_schema::rebase_root_refs(&mut inner, "#/properties/result");
    let defs = inner.as_object_mut().and_then(|m| m.remove("$defs"));
    let mut root = serde_json::json!({
        "type": "object",
        "properties": {"result": inner},
        "required": ["result"]
    });
    if let (Some(defs), Value::Object(map)) = (defs, &mut root) {
        map.insert("$defs".into(), defs);
    }
    root
}

fn strip_artefacts(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(format)) = map.get("format") {
                if RUST_NUMBER_FORMATS.contains(&format.as_str()) {
                    map.remove("format");
                }
            }
            map.values_mut().for_each(strip_artefacts);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_artefacts),
        _ => {}
    }
}

//! Elicitation forms from Rust types: the restricted schema the spec allows (a flat object of
//! strings, numbers, integers, booleans and enums) derived with schemars.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::types::JsonObject;

/// A type a form can be: `Deserialize + JsonSchema` with a flat shape. Implemented for every
/// such type; [`form_schema`] checks the shape when the form is asked.
///
/// What a field may be, and what it becomes:
///
/// | Rust field | `requestedSchema` property |
/// | --- | --- |
/// | `String` | `{"type": "string"}` (+ `format` `email`, `uri`, `date`, `date-time`, `minLength`, `maxLength` via `#[schemars(...)]`) |
/// | integers, floats | `{"type": "integer"}` / `{"type": "number"}` (+ `minimum`, `maximum`) |
/// | `bool` | `{"type": "boolean"}` |
/// | unit-variant enum | `{"type": "string", "enum": [...]}`; with a doc comment on every variant, titled: `{"type": "string", "oneOf": [{"const", "title"}]}` |
/// | `Vec<Enum>` | multi-select: `{"type": "array", "items": {"type": "string", "enum": [...]}}` (titled: `items.anyOf`) |
/// | `Option<T>` | `T`, not required |
/// | `#[serde(default)]` | `T` with `"default"`, not required |
///
/// Doc comments on fields become `description`. Anything else (a nested struct, a list of
/// strings, a map) is refused with a message naming the field.
pub trait ElicitForm: DeserializeOwned + JsonSchema {}

impl<T: DeserializeOwned + JsonSchema> ElicitForm for T {}

/// The `requestedSchema` of form `T`, or why `T` cannot be a form.
///
/// ```
/// use serde_json::json;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Signup {
///     /// Your name
///     name: String,
///     #[serde(default)]
///     newsletter: bool,
/// }
///
/// let schema = modelctx_core::input::form_schema::<Signup>().unwrap();
/// assert_eq!(serde_json::Value::Object(schema), json!({
///     "type": "object",
///     "properties": {
///         "name": {"type": "string", "description": "Your name"},
///         "newsletter": {"type": "boolean", "default": false}
///     },
///     "required": ["name"]
/// }));
/// ```
pub fn form_schema<T: JsonSchema>() -> Result<JsonObject, String> {
    let settings = SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true);
    let root = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    let name = T::schema_name();
    let Value::Object(root) = root else {
        return Err(format!("`{name}` is not a struct with named fields"));
    };
    if root.get("type") != Some(&Value::from("object")) {
        return Err(format!("`{name}` is not a struct with named fields"));
    }
    let mut properties = Map::new();
    let mut required: Vec<Value> = Vec::new();
    let declared: Vec<&str> = root
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(Value::Object(props)) = root.get("properties") {
        for (field, schema) in props {
            let (property, nullable) = field_schema(schema)
                .map_err(|why| format!("field `{field}` of `{name}`: {why}"))?;
            let optional = nullable || property.contains_key("default");
            if declared.contains(&field.as_str()) && !optional {
                required.push(Value::from(field.as_str()));
            }
            properties.insert(field.clone(), Value::Object(property));
        }
    }
    let mut out = Map::new();
    out.insert("type".into(), Value::from("object"));
    out.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        out.insert("required".into(), Value::Array(required));
    }
    Ok(out)
}

const NOT_FLAT: &str = "elicitation forms hold only strings, numbers, integers, booleans and \
                        enums of strings (no nested objects, lists or maps)";

/// One property, and whether it was `Option<T>`.
fn field_schema(schema: &Value) -> Result<(JsonObject, bool), String> {
    let Value::Object(schema) = schema else {
        return Err(NOT_FLAT.into());
    };
    // Option<T>: `type: [T, "null"]`, or `anyOf: [T, {type: null}]` for named types.
    if let Some(Value::Array(alternatives)) = schema.get("anyOf") {
        let non_null: Vec<&Value> = alternatives
            .iter()
            .filter(|a| a.get("type") != Some(&Value::from("null")))
            .collect();
        if non_null.len() == 1 && alternatives.len() == 2 {
            let mut inner = match non_null[0] {
                Value::Object(inner) => inner.clone(),
                _ => return Err(NOT_FLAT.into()),
            };
            for key in ["description", "title", "default"] {
                if let Some(v) = schema.get(key) {
                    inner.insert(key.into(), v.clone());
                }
            }
            return Ok((primitive(&inner)?, true));
        }
        return Err(NOT_FLAT.into());
    }
    let mut schema = schema.clone();
    let mut nullable = false;
    if let Some(Value::Array(types)) = schema.get("type") {
        let types: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
        match types.as_slice() {
            [t, "null"] | ["null", t] => {
                nullable = true;
                let t = (*t).to_owned();
                schema.insert("type".into(), Value::from(t));
            }
            _ => return Err(NOT_FLAT.into()),
        }
    }
    Ok((primitive(&schema)?, nullable))
}

/// Keeps the keywords the spec allows for one primitive property.
fn primitive(schema: &JsonObject) -> Result<JsonObject, String> {
    let mut out = Map::new();
    for key in ["title", "description", "default"] {
        if let Some(v) = schema.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    if let Some(Value::Array(variants)) = schema.get("oneOf") {
        out.insert("type".into(), Value::from("string"));
        out.insert("oneOf".into(), Value::Array(titled(variants)?));
        return Ok(out);
    }
    let ty = schema.get("type").and_then(Value::as_str).unwrap_or("");
    match ty {
        "string" => {
            copy(schema, &mut out, &["enum", "minLength", "maxLength"]);
            if let Some(Value::String(format)) = schema.get("format") {
                if ["email", "uri", "date", "date-time"].contains(&format.as_str()) {
                    out.insert("format".into(), Value::from(format.as_str()));
                }
            }
        }
        "integer" | "number" => copy(schema, &mut out, &["minimum", "maximum"]),
        "boolean" => {}
        "array" => {
            let items = match schema.get("items") {
                Some(Value::Object(items)) => items,
                _ => return Err(NOT_FLAT.into()),
            };
            let mut item = Map::new();
            if let Some(Value::Array(variants)) = items.get("oneOf").or(items.get("anyOf")) {
                item.insert("anyOf".into(), Value::Array(titled(variants)?));
            } else if let (Some("string"), Some(values)) =
                (items.get("type").and_then(Value::as_str), items.get("enum"))
            {
                item.insert("type".into(), Value::from("string"));
                item.insert("enum".into(), values.clone());
            } else {
                return Err(NOT_FLAT.into());
            }
            out.insert("items".into(), Value::Object(item));
            copy(schema, &mut out, &["minItems", "maxItems"]);
        }
        _ => return Err(NOT_FLAT.into()),
    }
    out.insert("type".into(), Value::from(ty));
    Ok(out)
}

/// `[{const, title}]` from schemars' enum variants (`const` with a doc comment as description).
fn titled(variants: &[Value]) -> Result<Vec<Value>, String> {
    variants
        .iter()
        .map(|v| {
            let constant = v.get("const").filter(|c| c.is_string()).ok_or(NOT_FLAT)?;
            let title = v
                .get("title")
                .or(v.get("description"))
                .cloned()
                .unwrap_or_else(|| constant.clone());
            let mut out = Map::new();
            out.insert("const".into(), constant.clone());
            out.insert("title".into(), title);
            Ok(Value::Object(out))
        })
        .collect::<Result<_, &str>>()
        .map_err(str::to_owned)
}

fn copy(from: &JsonObject, to: &mut JsonObject, keys: &[&str]) {
    for key in keys {
        if let Some(v) = from.get(*key) {
            to.insert((*key).into(), v.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Size {
        Small,
        Large,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    enum Color {
        /// Red
        #[serde(rename = "#FF0000")]
        Red,
        /// Green
        #[serde(rename = "#00FF00")]
        Green,
    }

    fn default_age() -> u32 {
        30
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Order {
        /// Contact address
        #[schemars(email)]
        email: String,
        #[serde(default = "default_age")]
        #[schemars(range(min = 18, max = 120))]
        age: u32,
        size: Size,
        color: Option<Color>,
        toppings: Vec<Size>,
        nickname: Option<String>,
    }

    #[test]
    fn flat_forms_become_the_restricted_schema() {
        let schema = Value::Object(form_schema::<Order>().unwrap());
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "email": {"type": "string", "format": "email", "description": "Contact address"},
                    "age": {"type": "integer", "default": 30, "minimum": 18, "maximum": 120},
                    "size": {"type": "string", "enum": ["small", "large"]},
                    "color": {"type": "string", "oneOf": [
                        {"const": "#FF0000", "title": "Red"},
                        {"const": "#00FF00", "title": "Green"}
                    ]},
                    "toppings": {"type": "array", "items": {"type": "string", "enum": ["small", "large"]}},
                    "nickname": {"type": "string"}
                },
                "required": ["email", "size", "toppings"]
            })
        );
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Address {
        street: String,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        address: Address,
    }

    #[test]
    fn nested_types_are_refused_naming_the_field() {
        let err = form_schema::<Nested>().unwrap_err();
        assert!(
            err.starts_with("field `address` of `Nested`: elicitation forms hold only"),
            "{err}"
        );
        assert!(form_schema::<String>()
            .unwrap_err()
            .contains("not a struct"));
    }
}

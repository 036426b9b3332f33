//! The forms of a schema that `tools/list` shows, for clients with a narrow JSON Schema reader:
//! optional properties without their `null` alternative, and `$ref`s replaced by the
//! definitions they name.
//!
//! Both are rewrites of a schema that keep what it accepts from a client that follows the
//! listed form: validation always runs against the schema as generated (see
//! [`ArgsSchema`](super::ArgsSchema)).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

/// Keywords whose value is one subschema.
const ONE: &[&str] = &[
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];

/// Keywords whose value is a map of subschemas.
const MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
    "definitions",
];

/// Keywords whose value is an array of subschemas.
const LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];

/// Keywords that describe and do not constrain: when a `$ref` with one of these beside it is
/// inlined, the one beside the reference wins.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Calls `f` on every direct subschema of `schema` (keyword positions only: a `default` or
/// `const` value that happens to look like a schema is data, not a schema).
fn each_subschema(schema: &mut Map<String, Value>, f: &mut impl FnMut(&mut Value)) {
    for (key, value) in schema.iter_mut() {
        let key = key.as_str();
        match value {
            Value::Object(map) if MAP.contains(&key) => map.values_mut().for_each(&mut *f),
            Value::Array(list) if LIST.contains(&key) => list.iter_mut().for_each(&mut *f),
            _ if ONE.contains(&key) => f(value),
            _ => {}
        }
    }
}

/// Removes the `null` alternative (`"type": [T, "null"]`, `anyOf: [T, {"type": "null"}]`, a
/// `null` in `enum`) from every property that is not in its object's `required`, at every
/// depth: what schemars generates for an `Option<T>`, written as the plain `T` most clients
/// accept. A property that is only `null` is left alone.
pub(crate) fn drop_optional_nulls(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    let required: BTreeSet<String> = match map.get("required") {
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => BTreeSet::new(),
    };
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            if !required.contains(name) {
                drop_null(property);
            }
        }
    }
    each_subschema(map, &mut drop_optional_nulls);
}

fn is_null_schema(value: &Value) -> bool {
    value.get("type").and_then(Value::as_str) == Some("null")
        && value.as_object().is_some_and(|m| m.len() == 1)
}

fn drop_null(property: &mut Value) {
    let Value::Object(map) = property else {
        return;
    };
    if let Some(Value::Array(types)) = map.get_mut("type") {
        if types.len() > 1 && types.iter().any(|t| t.as_str() == Some("null")) {
            types.retain(|t| t.as_str() != Some("null"));
            if let [single] = types.as_slice() {
                let single = single.clone();
                map.insert("type".into(), single);
            }
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        if values.len() > 1 && values.contains(&Value::Null) {
            values.retain(|v| !v.is_null());
        }
    }
    let Some(Value::Array(options)) = map.get("anyOf") else {
        return;
    };
    let [a, b] = options.as_slice() else {
        return;
    };
    let other = match (is_null_schema(a), is_null_schema(b)) {
        (true, false) => b.clone(),
        (false, true) => a.clone(),
        _ => return,
    };
    map.remove("anyOf");
    let siblings = std::mem::take(map);
    *property = merge(other, siblings);
}

/// `body` with the keywords that stood beside it: merged when those are all annotations (an
/// annotation beside wins over the body's), else `allOf: [body]` beside them (assertions can
/// interact, e.g. `properties` beside a body with `additionalProperties: false`, so they are
/// never mixed into one object).
fn merge(body: Value, siblings: Map<String, Value>) -> Value {
    if siblings.is_empty() {
        return body;
    }
    match body {
        Value::Bool(true) => Value::Object(siblings),
        Value::Object(mut map) if siblings.keys().all(|k| ANNOTATIONS.contains(&k.as_str())) => {
            map.extend(siblings);
            Value::Object(map)
        }
        other => {
            let mut map = siblings;
            map.insert("allOf".into(), Value::Array(vec![other]));
            Value::Object(map)
        }
    }
}

/// The `$defs` name a local reference (`#/$defs/Name`) points at.
fn def_name(reference: &str) -> Option<String> {
    let raw = reference.strip_prefix("#/$defs/")?;
    if raw.contains('/') {
        return None;
    }
    let decoded = crate::percent::decode(raw)?;
    Some(decoded.replace("~1", "/").replace("~0", "~"))
}

/// The definition a reference points inside of (`#/$defs/Name/properties/x` -> `Name`).
fn deep_def_name(reference: &str) -> Option<String> {
    let raw = reference.strip_prefix("#/$defs/")?;
    let (first, _) = raw.split_once('/')?;
    let decoded = crate::percent::decode(first)?;
    Some(decoded.replace("~1", "/").replace("~0", "~"))
}

/// The definitions some reference points inside of: they stay in `$defs`, whole.
fn pointed_into(schema: &Value, into: &mut BTreeSet<String>) {
    let Value::Object(map) = schema else {
        return;
    };
    if let Some(name) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(deep_def_name)
    {
        into.insert(name);
    }
    let mut map = map.clone();
    each_subschema(&mut map, &mut |s| pointed_into(s, into));
}

/// The `$defs` names referenced anywhere in `schema` (keyword positions only).
fn references(schema: &Value, into: &mut BTreeSet<String>) {
    let mut schema = schema.clone();
    collect_refs(&mut schema, into);
}

fn collect_refs(schema: &mut Value, into: &mut BTreeSet<String>) {
    let Value::Object(map) = schema else {
        return;
    };
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        if let Some(name) = def_name(reference).or_else(|| deep_def_name(reference)) {
            into.insert(name);
        }
    }
    each_subschema(map, &mut |s| collect_refs(s, into));
}

/// Moves the root of `schema` to `base` (a JSON pointer fragment such as
/// `#/properties/result`): references to the root itself, or into it other than `$defs`
/// (which stay at the root), are rewritten to point under `base`.
pub(crate) fn rebase_root_refs(schema: &mut Value, base: &str) {
    let Value::Object(map) = schema else {
        return;
    };
    if let Some(Value::String(reference)) = map.get_mut("$ref") {
        if let Some(rest) = reference.strip_prefix('#') {
            if rest.is_empty() || (rest.starts_with('/') && !rest.starts_with("/$defs/")) {
                *reference = format!("{base}{rest}");
            }
        }
    }
    each_subschema(map, &mut |s| rebase_root_refs(s, base));
}

/// Replaces every `$ref` to the root's `$defs` by the definition it names, so the schema reads
/// without following references. A type that contains itself (directly or through others)
/// cannot be written out in full: references to it stay, and `$defs` keeps just those
/// definitions (themselves inlined as far as they go). Keywords beside a `$ref` are kept (see
/// [`merge`]). References to anything else (`#`, other documents) are left as they are.
pub(crate) fn inline_refs(schema: &mut Value) {
    let Value::Object(root) = schema else {
        return;
    };
    let Some(Value::Object(defs)) = root.remove("$defs") else {
        return;
    };
    let defs: BTreeMap<String, Value> = defs.into_iter().collect();
    let edges: BTreeMap<&str, BTreeSet<String>> = defs
        .iter()
        .map(|(name, body)| {
            let mut refs = BTreeSet::new();
            references(body, &mut refs);
            (name.as_str(), refs)
        })
        .collect();
    // A definition that contains itself cannot be written out in full, and one that a
    // reference points inside of must stay where it points: both stay in `$defs`.
    let mut recursive: BTreeSet<String> = defs
        .keys()
        .filter(|name| reaches_itself(name, &edges))
        .cloned()
        .collect();
    pointed_into(&Value::Object(root.clone()), &mut recursive);
    for body in defs.values() {
        pointed_into(body, &mut recursive);
    }
    let inliner = Inliner {
        defs: &defs,
        recursive: &recursive,
    };
    let mut body = Value::Object(std::mem::take(root));
    inliner.expand(&mut body);
    let Value::Object(mut root_map) = body else {
        return;
    };
    // Keep the recursive definitions still referenced, from the root or from each other.
    let mut kept = BTreeMap::new();
    let mut pending = BTreeSet::new();
    references(&Value::Object(root_map.clone()), &mut pending);
    while let Some(name) = pending.pop_first() {
        if kept.contains_key(&name) || !recursive.contains(&name) {
            continue;
        }
        let Some(def) = defs.get(&name) else {
            continue;
        };
        let mut def = def.clone();
        inliner.expand(&mut def);
        references(&def, &mut pending);
        kept.insert(name, def);
    }
    if !kept.is_empty() {
        root_map.insert("$defs".into(), Value::Object(kept.into_iter().collect()));
    }
    *schema = Value::Object(root_map);
}

/// Whether definition `start` refers back to itself through one or more references.
fn reaches_itself(start: &str, edges: &BTreeMap<&str, BTreeSet<String>>) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<&str> = edges
        .get(start)
        .map(|e| e.iter().map(String::as_str).collect())
        .unwrap_or_default();
    while let Some(name) = stack.pop() {
        if name == start {
            return true;
        }
        if seen.insert(name) {
            if let Some(next) = edges.get(name) {
                stack.extend(next.iter().map(String::as_str));
            }
        }
    }
    false
}

struct Inliner<'a> {
    defs: &'a BTreeMap<String, Value>,
    recursive: &'a BTreeSet<String>,
}

impl Inliner<'_> {
    /// Inlines the references in `schema`. Terminates: only definitions that do not reach
    /// themselves are inlined, and those form no cycle.
    fn expand(&self, schema: &mut Value) {
        let Value::Object(map) = schema else {
            return;
        };
        let target = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(def_name)
            .filter(|name| !self.recursive.contains(name))
            .and_then(|name| self.defs.get(&name));
        if let Some(def) = target {
            let mut body = def.clone();
            self.expand(&mut body);
            let mut siblings = std::mem::take(map);
            siblings.remove("$ref");
            self.expand_children(&mut siblings);
            *schema = merge(body, siblings);
            return;
        }
        self.expand_children(map);
    }

    fn expand_children(&self, map: &mut Map<String, Value>) {
        each_subschema(map, &mut |s| self.expand(s));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn optional_nulls_go_at_every_depth_but_required_ones_stay() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": ["string", "null"], "description": "A."},
                "b": {"anyOf": [{"$ref": "#/$defs/B"}, {"type": "null"}], "description": "B."},
                "c": {"type": ["integer", "null"]},
                "d": {"type": "null"}
            },
            "required": ["c"],
            "$defs": {"B": {"type": "object", "properties": {
                "e": {"enum": ["x", "y", null], "type": ["string", "null"]}
            }}}
        });
        drop_optional_nulls(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string", "description": "A."},
                    "b": {"$ref": "#/$defs/B", "description": "B."},
                    "c": {"type": ["integer", "null"]},
                    "d": {"type": "null"}
                },
                "required": ["c"],
                "$defs": {"B": {"type": "object", "properties": {
                    "e": {"enum": ["x", "y"], "type": "string"}
                }}}
            })
        );
    }

    #[test]
    fn refs_are_inlined_and_recursive_ones_kept() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "at": {"$ref": "#/$defs/Point", "description": "Where."},
                "tree": {"$ref": "#/$defs/Tree"},
                "default_is_data": {"type": "object", "default": {"$ref": "#/$defs/Point"}}
            },
            "$defs": {
                "Point": {"type": "object", "description": "A point.", "properties": {"x": {"$ref": "#/$defs/Num"}}},
                "Num": {"type": "number"},
                "Tree": {"type": "object", "properties": {
                    "at": {"$ref": "#/$defs/Point"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
                }},
                "Unused": {"type": "string"}
            }
        });
        inline_refs(&mut schema);
        let point = json!({"type": "object", "description": "Where.", "properties": {"x": {"type": "number"}}});
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "at": point,
                    "tree": {"$ref": "#/$defs/Tree"},
                    "default_is_data": {"type": "object", "default": {"$ref": "#/$defs/Point"}}
                },
                "$defs": {"Tree": {"type": "object", "properties": {
                    "at": {"type": "object", "description": "A point.", "properties": {"x": {"type": "number"}}},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
                }}}
            })
        );
    }

    #[test]
    fn a_clashing_sibling_keeps_both_constraints() {
        let mut schema = json!({
            "type": "object",
            "properties": {"n": {"$ref": "#/$defs/Small", "maximum": 5}},
            "$defs": {"Small": {"type": "integer", "maximum": 10}}
        });
        inline_refs(&mut schema);
        assert_eq!(
            schema["properties"]["n"],
            json!({"maximum": 5, "allOf": [{"type": "integer", "maximum": 10}]})
        );
    }

    #[test]
    fn assertions_beside_a_ref_stay_apart_and_pointers_into_defs_keep_them() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "closed": {"$ref": "#/$defs/Closed", "properties": {"b": {"type": "string"}}},
                "x": {"$ref": "#/$defs/Closed/properties/a"}
            },
            "$defs": {
                "Closed": {"type": "object", "properties": {"a": {"type": "integer"}},
                           "additionalProperties": false}
            }
        });
        inline_refs(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    // Merged, `b` would be allowed; beside `allOf` it is still refused.
                    "closed": {"$ref": "#/$defs/Closed", "properties": {"b": {"type": "string"}}},
                    "x": {"$ref": "#/$defs/Closed/properties/a"}
                },
                "$defs": {
                    "Closed": {"type": "object", "properties": {"a": {"type": "integer"}},
                               "additionalProperties": false}
                }
            })
        );

        let mut schema = json!({
            "type": "object",
            "properties": {"open": {"$ref": "#/$defs/Closed", "minProperties": 1}},
            "$defs": {"Closed": {"type": "object", "additionalProperties": false}}
        });
        inline_refs(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {"open": {"minProperties": 1, "allOf": [
                    {"type": "object", "additionalProperties": false}
                ]}}
            })
        );
    }
}

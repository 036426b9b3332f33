//! A JSON Schema (2020-12) read into a tree of rules the built-in validator walks
//! ([`super::schema_check`]).
//!
//! The built-in validator reads the keywords that tool schemas use: `type`, `properties`,
//! `additionalProperties`, `required`, `minProperties`/`maxProperties`, `items`/`prefixItems`,
//! `minItems`/`maxItems`, `uniqueItems`, `minimum`/`maximum` and their exclusive forms,
//! `multipleOf`, `minLength`/`maxLength`, `pattern`, `enum`, `const`, `allOf`/`anyOf`/`oneOf`/
//! `not`, `if`/`then`/`else`, boolean schemas and `$ref` to a place in the same document (`#`,
//! `#/$defs/..`).
//! Annotations (`title`, `description`, `default`, `format`, ...) and unknown keywords are
//! ignored, as the dialect says. A schema using any other assertion keyword
//! (`patternProperties`, `contains`, `unevaluatedProperties`, a remote `$ref`, ...) or naming
//! another dialect is [`Unreadable`]: it goes to the `jsonschema` crate when that feature is on,
//! and is refused when the server is built otherwise, never half-checked.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

/// Why the built-in validator does not take a schema.
#[derive(Debug)]
pub(super) enum Unreadable {
    /// The schema is not valid JSON Schema (a `type` of 5, a negative `minLength`...).
    Invalid(String),
    /// Valid, but it uses what the built-in validator does not read (named).
    Unsupported(String),
}

/// The seven JSON types as bits, in the order error texts list them.
pub(super) const TYPE_NAMES: [&str; 7] = [
    "null", "boolean", "integer", "number", "string", "array", "object",
];

/// One compiled schema: its nodes, the root first.
#[derive(Debug)]
pub(super) struct Tree {
    pub(super) nodes: Vec<Node>,
}

/// A schema: `true`, `false`, or its rules in the order the schema wrote them.
#[derive(Debug)]
pub(super) enum Node {
    Any,
    Never,
    Rules(Vec<Rule>),
}

/// What an object's members not named in `properties` may be.
#[derive(Debug)]
pub(super) enum Additional {
    Allowed,
    /// `additionalProperties: false` with `properties`: one complaint naming them all.
    Refused,
    /// `additionalProperties: false` without a `properties` keyword: the first member is
    /// refused.
    RefusedAlone,
    Schema(usize),
}

/// One assertion of a schema (node indices point into [`Tree::nodes`]).
#[derive(Debug)]
pub(super) enum Rule {
    /// A bit set over [`TYPE_NAMES`].
    Type(u8),
    Object {
        properties: Vec<(String, usize)>,
        additional: Additional,
    },
    Required(Vec<String>),
    MinProperties(u64),
    MaxProperties(u64),
    Items {
        prefix: Vec<usize>,
        rest: Option<usize>,
    },
    MinItems(u64),
    MaxItems(u64),
    UniqueItems,
    Minimum(Number),
    Maximum(Number),
    ExclusiveMinimum(Number),
    ExclusiveMaximum(Number),
    /// Above 0.
    MultipleOf(f64),
    MinLength(u64),
    MaxLength(u64),
    Pattern(Box<regex_lite::Regex>, String),
    Enum(Vec<Value>),
    Const(Value),
    AllOf(Vec<usize>),
    AnyOf(Vec<usize>),
    OneOf(Vec<usize>),
    Not(usize, Value),
    /// `if`/`then`/`else`: the branch the condition picks must hold.
    If {
        condition: usize,
        then: Option<usize>,
        otherwise: Option<usize>,
    },
    Ref(usize),
}

/// Keywords of the dialect the built-in validator does not evaluate.
const UNSUPPORTED: &[&str] = &[
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "patternProperties",
    "propertyNames",
    "contains",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
    "$dynamicRef",
    "$recursiveRef",
    "$vocabulary",
];

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreadable::Invalid(why) => write!(f, "invalid: {why}"),
            Unreadable::Unsupported(what) => write!(f, "uses {what}"),
        }
    }
}

const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

impl Tree {
    /// Reads `schema`, or says why the built-in validator cannot.
    pub(super) fn compile(schema: &Value) -> Result<Self, Unreadable> {
        if let Some(dialect) = schema.get("$schema") {
            let named = dialect.as_str().map(|s| s.trim_end_matches('#'));
            if named != Some(DIALECT) {
                return Err(Unreadable::Unsupported(format!(
                    "`$schema` {dialect} (the built-in validator reads 2020-12)"
                )));
            }
        }
        let mut reader = Reader {
            root: schema,
            nodes: Vec::new(),
            by_pointer: HashMap::new(),
        };
        reader.node(schema, true)?;
        let tree = Tree {
            nodes: reader.nodes,
        };
        tree.refuse_endless_refs()?;
        Ok(tree)
    }

    /// A `$ref` cycle that never descends into the instance would never end: refused.
    fn refuse_endless_refs(&self) -> Result<(), Unreadable> {
        // 0 = unseen, 1 = on the path, 2 = done.
        let mut state = vec![0u8; self.nodes.len()];
        for start in 0..self.nodes.len() {
            if state[start] == 0 && self.cycles_from(start, &mut state) {
                return Err(Unreadable::Unsupported(
                    "a `$ref` that refers back to itself without going into the value".into(),
                ));
            }
        }
        Ok(())
    }

    fn cycles_from(&self, at: usize, state: &mut [u8]) -> bool {
        state[at] = 1;
        let mut next = Vec::new();
        if let Node::Rules(rules) = &self.nodes[at] {
            for rule in rules {
                match rule {
                    Rule::Ref(to) | Rule::Not(to, _) => next.push(*to),
                    Rule::If {
                        condition,
                        then,
                        otherwise,
                    } => next.extend([Some(*condition), *then, *otherwise].into_iter().flatten()),
                    Rule::AllOf(all) | Rule::AnyOf(all) | Rule::OneOf(all) => {
                        next.extend(all.iter().copied())
                    }
                    _ => {}
                }
            }
        }
        for to in next {
            if state[to] == 1 || (state[to] == 0 && self.cycles_from(to, state)) {
                return true;
            }
        }
        state[at] = 2;
        false
    }
}

struct Reader<'s> {
    root: &'s Value,
    nodes: Vec<Node>,
    /// `$ref` targets already given a node, by their JSON pointer.
    by_pointer: HashMap<String, usize>,
}

impl<'s> Reader<'s> {
    /// Compiles `schema` into a new node and returns its index.
    fn node(&mut self, schema: &'s Value, is_root: bool) -> Result<usize, Unreadable> {
        let at = self.nodes.len();
        self.nodes.push(Node::Any);
        self.nodes[at] = self.read(schema, is_root)?;
        Ok(at)
    }

    fn read(&mut self, schema: &'s Value, is_root: bool) -> Result<Node, Unreadable> {
        let map = match schema {
            Value::Bool(true) => return Ok(Node::Any),
            Value::Bool(false) => return Ok(Node::Never),
            Value::Object(map) => map,
            other => {
                return Err(Unreadable::Invalid(format!(
                    "a schema is an object or a boolean, not {other}"
                )))
            }
        };
        let mut rules = Vec::new();
        let mut object_done = false;
        for (keyword, value) in map {
            let rule = match keyword.as_str() {
                "type" => Rule::Type(types(value)?),
                "properties" | "additionalProperties" => {
                    if object_done {
                        continue;
                    }
                    object_done = true;
                    self.object(map)?
                }
                "required" => Rule::Required(names(keyword, value)?),
                "minProperties" => Rule::MinProperties(count(keyword, value)?),
                "maxProperties" => Rule::MaxProperties(count(keyword, value)?),
                "items" | "prefixItems" => {
                    if rules.iter().any(|r| matches!(r, Rule::Items { .. })) {
                        continue;
                    }
                    self.items(map)?
                }
                "minItems" => Rule::MinItems(count(keyword, value)?),
                "maxItems" => Rule::MaxItems(count(keyword, value)?),
                "uniqueItems" => match value {
                    Value::Bool(true) => Rule::UniqueItems,
                    Value::Bool(false) => continue,
                    _ => return Err(invalid(keyword, "a boolean")),
                },
                "minimum" => Rule::Minimum(number(keyword, value)?),
                "maximum" => Rule::Maximum(number(keyword, value)?),
                "exclusiveMinimum" => Rule::ExclusiveMinimum(number(keyword, value)?),
                "exclusiveMaximum" => Rule::ExclusiveMaximum(number(keyword, value)?),
                "multipleOf" => match number(keyword, value)?.as_f64() {
                    Some(m) if m > 0.0 => Rule::MultipleOf(m),
                    _ => return Err(invalid(keyword, "a number above 0")),
                },
                "minLength" => Rule::MinLength(count(keyword, value)?),
                "maxLength" => Rule::MaxLength(count(keyword, value)?),
                "pattern" => {
                    let Value::String(text) = value else {
                        return Err(invalid(keyword, "a string"));
                    };
                    let regex = regex_lite::Regex::new(text).map_err(|_| {
                        Unreadable::Unsupported(format!(
                            "the `pattern` {value} (not a regular expression the built-in \
                             validator reads)"
                        ))
                    })?;
                    Rule::Pattern(Box::new(regex), text.clone())
                }
                "enum" => match value {
                    Value::Array(options) => Rule::Enum(options.clone()),
                    _ => return Err(invalid(keyword, "an array")),
                },
                "const" => Rule::Const(value.clone()),
                "allOf" => Rule::AllOf(self.list(keyword, value)?),
                "anyOf" => Rule::AnyOf(self.list(keyword, value)?),
                "oneOf" => Rule::OneOf(self.list(keyword, value)?),
                "not" => Rule::Not(self.node(value, false)?, value.clone()),
                "if" => {
                    let condition = self.node(value, false)?;
                    let then = map.get("then").map(|t| self.node(t, false)).transpose()?;
                    let otherwise = map.get("else").map(|e| self.node(e, false)).transpose()?;
                    if then.is_none() && otherwise.is_none() {
                        continue;
                    }
                    Rule::If {
                        condition,
                        then,
                        otherwise,
                    }
                }
                "$ref" => Rule::Ref(self.reference(value)?),
                "$id" if !is_root => {
                    return Err(Unreadable::Unsupported(
                        "an `$id` below the root schema".into(),
                    ))
                }
                "$schema" if !is_root => {
                    return Err(Unreadable::Unsupported(
                        "a `$schema` below the root schema".into(),
                    ))
                }
                other if UNSUPPORTED.contains(&other) => {
                    return Err(Unreadable::Unsupported(format!("the keyword `{other}`")))
                }
                // Annotations, `$defs` (read when referred to) and unknown keywords.
                _ => continue,
            };
            rules.push(rule);
        }
        Ok(Node::Rules(rules))
    }

    fn object(&mut self, map: &'s Map<String, Value>) -> Result<Rule, Unreadable> {
        let mut properties = Vec::new();
        if let Some(value) = map.get("properties") {
            let Value::Object(members) = value else {
                return Err(invalid("properties", "an object"));
            };
            for (name, schema) in members {
                properties.push((name.clone(), self.node(schema, false)?));
            }
        }
        let additional = match map.get("additionalProperties") {
            None | Some(Value::Bool(true)) => Additional::Allowed,
            Some(Value::Bool(false)) if !map.contains_key("properties") => Additional::RefusedAlone,
            Some(Value::Bool(false)) => Additional::Refused,
            Some(schema) => Additional::Schema(self.node(schema, false)?),
        };
        Ok(Rule::Object {
            properties,
            additional,
        })
    }

    fn items(&mut self, map: &'s Map<String, Value>) -> Result<Rule, Unreadable> {
        let prefix = match map.get("prefixItems") {
            Some(value) => self.list("prefixItems", value)?,
            None => Vec::new(),
        };
        let rest = match map.get("items") {
            Some(Value::Array(_)) => {
                return Err(Unreadable::Unsupported(
                    "`items` as an array (2020-12 says `prefixItems`)".into(),
                ))
            }
            Some(schema) => Some(self.node(schema, false)?),
            None => None,
        };
        Ok(Rule::Items { prefix, rest })
    }

    fn list(&mut self, keyword: &str, value: &'s Value) -> Result<Vec<usize>, Unreadable> {
        match value {
            Value::Array(schemas) if !schemas.is_empty() => schemas
                .iter()
                .map(|schema| self.node(schema, false))
                .collect(),
            _ => Err(invalid(keyword, "a non-empty array of schemas")),
        }
    }

    /// The node of a `$ref` to a place in this document, read once however often referred to.
    fn reference(&mut self, value: &Value) -> Result<usize, Unreadable> {
        let Value::String(reference) = value else {
            return Err(invalid("$ref", "a string"));
        };
        let Some(pointer) = reference.strip_prefix('#') else {
            return Err(Unreadable::Unsupported(format!(
                "the `$ref` {value} (outside this schema)"
            )));
        };
        if let Some(&at) = self.by_pointer.get(pointer) {
            return Ok(at);
        }
        let target = resolve(self.root, pointer).ok_or_else(|| {
            Unreadable::Unsupported(format!("the `$ref` {value} (no such place in the schema)"))
        })?;
        let at = self.nodes.len();
        self.nodes.push(Node::Any);
        self.by_pointer.insert(pointer.to_owned(), at);
        self.nodes[at] = self.read(target, pointer.is_empty())?;
        Ok(at)
    }
}

/// The value at a JSON pointer (`""`, `/$defs/Name`), with `~0`/`~1` and `%25`-style escapes.
fn resolve<'s>(root: &'s Value, pointer: &str) -> Option<&'s Value> {
    if pointer.is_empty() {
        return Some(root);
    }
    let rest = pointer.strip_prefix('/')?;
    let mut at = root;
    for raw in rest.split('/') {
        let token = crate::percent::decode(raw)?
            .replace("~1", "/")
            .replace("~0", "~");
        at = match at {
            Value::Object(map) => map.get(&token)?,
            Value::Array(items) => items.get(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

fn invalid(keyword: &str, what: &str) -> Unreadable {
    Unreadable::Invalid(format!("`{keyword}` must be {what}"))
}

fn types(value: &Value) -> Result<u8, Unreadable> {
    let one = |name: &Value| -> Result<u8, Unreadable> {
        name.as_str()
            .and_then(|n| TYPE_NAMES.iter().position(|t| *t == n))
            .map(|bit| 1u8 << bit)
            .ok_or_else(|| Unreadable::Invalid(format!("{name} is not a JSON type")))
    };
    match value {
        Value::Array(names) if !names.is_empty() => {
            names.iter().try_fold(0u8, |set, name| Ok(set | one(name)?))
        }
        Value::String(_) => one(value),
        _ => Err(invalid("type", "a type name or a list of them")),
    }
}

fn names(keyword: &str, value: &Value) -> Result<Vec<String>, Unreadable> {
    let Value::Array(items) = value else {
        return Err(invalid(keyword, "an array of strings"));
    };
    items
        .iter()
        .map(|item| {
            item.as_str()
                .map(str::to_owned)
                .ok_or_else(|| invalid(keyword, "an array of strings"))
        })
        .collect()
}

fn count(keyword: &str, value: &Value) -> Result<u64, Unreadable> {
    match value {
        Value::Number(n) => n
            .as_u64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 1.8e19)
                    .map(|f| f as u64)
            })
            .ok_or_else(|| invalid(keyword, "a non-negative integer")),
        _ => Err(invalid(keyword, "a non-negative integer")),
    }
}

fn number(keyword: &str, value: &Value) -> Result<Number, Unreadable> {
    match value {
        Value::Number(n) => Ok(n.clone()),
        _ => Err(invalid(keyword, "a number")),
    }
}

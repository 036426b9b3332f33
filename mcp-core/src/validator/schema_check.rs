//! The built-in validator's walk of a value against a [`Tree`]: a quick yes/no pass that
//! allocates nothing, and, only when it says no, a second pass that writes each complaint in
//! the words the `jsonschema` crate uses (the differential test in `tests/schema_builtin.rs`
//! holds both to the same texts).

use std::cmp::Ordering;
use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

use super::schema_tree::{Additional, Node, Rule, Tree, TYPE_NAMES};

/// One broken rule: where (a JSON pointer into the value), the offending value, and the text.
#[derive(Debug)]
pub(super) struct Complaint<'v> {
    pub(super) pointer: String,
    pub(super) instance: &'v Value,
    pub(super) message: String,
}

/// Where the walk is in the value: a chain of steps on the stack, written out only for a
/// complaint.
#[derive(Clone, Copy)]
struct Path<'p> {
    parent: Option<&'p Path<'p>>,
    step: Step<'p>,
}

#[derive(Clone, Copy)]
enum Step<'p> {
    Root,
    Key(&'p str),
    Index(usize),
}

impl<'p> Path<'p> {
    fn key(&'p self, key: &'p str) -> Path<'p> {
        Path {
            parent: Some(self),
            step: Step::Key(key),
        }
    }

    fn index(&'p self, index: usize) -> Path<'p> {
        Path {
            parent: Some(self),
            step: Step::Index(index),
        }
    }

    fn pointer(&self) -> String {
        let mut steps = Vec::new();
        let mut at = Some(self);
        while let Some(path) = at {
            steps.push(path.step);
            at = path.parent;
        }
        let mut out = String::new();
        for step in steps.iter().rev() {
            match step {
                Step::Root => {}
                Step::Key(key) => {
                    out.push('/');
                    out.push_str(&key.replace('~', "~0").replace('/', "~1"));
                }
                Step::Index(i) => {
                    let _ = write!(out, "/{i}");
                }
            }
        }
        out
    }
}

/// At most this many complaints are gathered for one value (the caller shows five).
const MAX_COMPLAINTS: usize = 64;

impl Tree {
    /// Whether `value` satisfies the root schema.
    pub(super) fn is_valid(&self, value: &Value) -> bool {
        self.valid(0, value)
    }

    /// What `value` breaks, in the order the schema and the value are walked.
    pub(super) fn complaints<'v>(&self, value: &'v Value) -> Vec<Complaint<'v>> {
        let mut out = Vec::new();
        let root = Path {
            parent: None,
            step: Step::Root,
        };
        self.errors(0, value, &root, &mut out);
        out
    }

    fn valid(&self, node: usize, value: &Value) -> bool {
        match &self.nodes[node] {
            Node::Any => true,
            Node::Never => false,
            Node::Rules(rules) => rules.iter().all(|rule| self.rule_valid(rule, value)),
        }
    }

    fn rule_valid(&self, rule: &Rule, value: &Value) -> bool {
        match (rule, value) {
            (Rule::Type(set), _) => set & type_bits(value) != 0,
            (
                Rule::Object {
                    properties,
                    additional,
                },
                Value::Object(map),
            ) => map.iter().all(|(key, member)| match find(properties, key) {
                Some(node) => self.valid(node, member),
                None => match additional {
                    Additional::Allowed => true,
                    Additional::Refused | Additional::RefusedAlone => false,
                    Additional::Schema(node) => self.valid(*node, member),
                },
            }),
            (Rule::Required(names), Value::Object(map)) => {
                names.iter().all(|name| crate::members::has(map, name))
            }
            (Rule::MinProperties(n), Value::Object(map)) => map.len() as u64 >= *n,
            (Rule::MaxProperties(n), Value::Object(map)) => map.len() as u64 <= *n,
            (Rule::Items { prefix, rest }, Value::Array(items)) => items
                .iter()
                .enumerate()
                .all(|(i, item)| item_node(prefix, *rest, i).is_none_or(|n| self.valid(n, item))),
            (Rule::MinItems(n), Value::Array(items)) => items.len() as u64 >= *n,
            (Rule::MaxItems(n), Value::Array(items)) => items.len() as u64 <= *n,
            (Rule::UniqueItems, Value::Array(items)) => all_unique(items),
            (Rule::Minimum(limit), Value::Number(n)) => compare(n, limit) != Ordering::Less,
            (Rule::Maximum(limit), Value::Number(n)) => compare(n, limit) != Ordering::Greater,
            (Rule::ExclusiveMinimum(limit), Value::Number(n)) => {
                compare(n, limit) == Ordering::Greater
            }
            (Rule::ExclusiveMaximum(limit), Value::Number(n)) => {
                compare(n, limit) == Ordering::Less
            }
            (Rule::MultipleOf(multiple), Value::Number(n)) => is_multiple(n, *multiple),
            (Rule::MinLength(n), Value::String(text)) => text.chars().count() as u64 >= *n,
            (Rule::MaxLength(n), Value::String(text)) => text.chars().count() as u64 <= *n,
            (Rule::Pattern(regex, _), Value::String(text)) => regex.is_match(text),
            (Rule::Enum(options), _) => options.iter().any(|o| equal(o, value)),
            (Rule::Const(expected), _) => equal(expected, value),
            (Rule::AllOf(nodes), _) => nodes.iter().all(|n| self.valid(*n, value)),
            (Rule::AnyOf(nodes), _) => nodes.iter().any(|n| self.valid(*n, value)),
            (Rule::OneOf(nodes), _) => {
                nodes
                    .iter()
                    .filter(|n| self.valid(**n, value))
                    .take(2)
                    .count()
                    == 1
            }
            (Rule::Not(node, _), _) => !self.valid(*node, value),
            (Rule::Ref(node), _) => self.valid(*node, value),
            (
                Rule::If {
                    condition,
                    then,
                    otherwise,
                },
                _,
            ) => self
                .branch(*condition, *then, *otherwise, value)
                .is_none_or(|b| self.valid(b, value)),
            // A rule about another kind of value says nothing about this one.
            _ => true,
        }
    }

    fn errors<'v>(
        &self,
        node: usize,
        value: &'v Value,
        path: &Path<'_>,
        out: &mut Vec<Complaint<'v>>,
    ) {
        match &self.nodes[node] {
            Node::Any => {}
            Node::Never => complain(
                out,
                path,
                value,
                format!("False schema does not allow {value}"),
            ),
            Node::Rules(rules) => {
                for rule in rules {
                    if out.len() >= MAX_COMPLAINTS {
                        return;
                    }
                    if !self.rule_valid(rule, value) {
                        self.rule_errors(rule, value, path, out);
                    }
                }
            }
        }
    }

    /// The complaints of a rule `value` is known to break.
    fn rule_errors<'v>(
        &self,
        rule: &Rule,
        value: &'v Value,
        path: &Path<'_>,
        out: &mut Vec<Complaint<'v>>,
    ) {
        let message = match (rule, value) {
            (Rule::Type(set), _) => type_message(*set, value),
            (
                Rule::Object {
                    properties,
                    additional,
                },
                Value::Object(map),
            ) => {
                self.object_errors(properties, additional, map, value, path, out);
                return;
            }
            (Rule::Required(names), Value::Object(map)) => {
                for name in names.iter().filter(|name| !map.contains_key(*name)) {
                    let quoted = Value::String(name.clone());
                    complain(out, path, value, format!("{quoted} is a required property"));
                }
                return;
            }
            (Rule::MinProperties(n), _) => format!(
                "{value} has less than {n} {}",
                plural(*n, "property", "properties")
            ),
            (Rule::MaxProperties(n), _) => format!(
                "{value} has more than {n} {}",
                plural(*n, "property", "properties")
            ),
            (Rule::Items { prefix, rest }, Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    if let Some(node) = item_node(prefix, *rest, i) {
                        self.errors(node, item, &path.index(i), out);
                    }
                }
                return;
            }
            (Rule::MinItems(n), _) => {
                format!("{value} has less than {n} {}", plural(*n, "item", "items"))
            }
            (Rule::MaxItems(n), _) => {
                format!("{value} has more than {n} {}", plural(*n, "item", "items"))
            }
            (Rule::UniqueItems, _) => format!("{value} has non-unique elements"),
            (Rule::Minimum(limit), _) => format!("{value} is less than the minimum of {limit}"),
            (Rule::Maximum(limit), _) => format!("{value} is greater than the maximum of {limit}"),
            (Rule::ExclusiveMinimum(limit), _) => {
                format!("{value} is less than or equal to the minimum of {limit}")
            }
            (Rule::ExclusiveMaximum(limit), _) => {
                format!("{value} is greater than or equal to the maximum of {limit}")
            }
            (Rule::MultipleOf(multiple), _) => format!("{value} is not a multiple of {multiple}"),
            (Rule::MinLength(n), _) => format!(
                "{value} is shorter than {n} {}",
                plural(*n, "character", "characters")
            ),
            (Rule::MaxLength(n), _) => format!(
                "{value} is longer than {n} {}",
                plural(*n, "character", "characters")
            ),
            (Rule::Pattern(_, pattern), _) => format!("{value} does not match \"{pattern}\""),
            (Rule::Enum(options), _) => enum_message(value, options),
            (Rule::Const(expected), _) => format!("{expected} was expected"),
            (Rule::AllOf(nodes), _) => {
                for node in nodes {
                    self.errors(*node, value, path, out);
                }
                return;
            }
            (Rule::AnyOf(_), _) => format!(
                "{value} is not valid under any of the schemas listed in the 'anyOf' keyword"
            ),
            (Rule::OneOf(nodes), _) => {
                if nodes.iter().any(|n| self.valid(*n, value)) {
                    format!("{value} is valid under more than one of the schemas listed in the 'oneOf' keyword")
                } else {
                    format!("{value} is not valid under any of the schemas listed in the 'oneOf' keyword")
                }
            }
            (Rule::Not(_, schema), _) => format!("{schema} is not allowed for {value}"),
            (Rule::Ref(node), _) => {
                self.errors(*node, value, path, out);
                return;
            }
            (
                Rule::If {
                    condition,
                    then,
                    otherwise,
                },
                _,
            ) => {
                if let Some(branch) = self.branch(*condition, *then, *otherwise, value) {
                    self.errors(branch, value, path, out);
                }
                return;
            }
            // `rule_valid` said no, so the value is of the kind the rule is about.
            _ => return,
        };
        complain(out, path, value, message);
    }

    /// The `then` or `else` schema the `if` condition picks for `value`, if there is one.
    fn branch(
        &self,
        condition: usize,
        then: Option<usize>,
        otherwise: Option<usize>,
        value: &Value,
    ) -> Option<usize> {
        if self.valid(condition, value) {
            then
        } else {
            otherwise
        }
    }

    fn object_errors<'v>(
        &self,
        properties: &[(String, usize)],
        additional: &Additional,
        map: &'v Map<String, Value>,
        value: &'v Value,
        path: &Path<'_>,
        out: &mut Vec<Complaint<'v>>,
    ) {
        let mut unexpected = Vec::new();
        for (key, member) in map {
            match (find(properties, key), additional) {
                (Some(node), _) => self.errors(node, member, &path.key(key), out),
                (None, Additional::Schema(node)) => self.errors(*node, member, &path.key(key), out),
                (None, Additional::Allowed) => {}
                (None, Additional::Refused) => unexpected.push(key),
                (None, Additional::RefusedAlone) => {
                    complain(
                        out,
                        path,
                        member,
                        format!("False schema does not allow {member}"),
                    );
                    return;
                }
            }
        }
        if !unexpected.is_empty() {
            let mut message = String::from("Additional properties are not allowed (");
            for (i, key) in unexpected.iter().enumerate() {
                if i > 0 {
                    message.push_str(", ");
                }
                let _ = write!(message, "'{key}'");
            }
            message.push_str(if unexpected.len() == 1 {
                " was unexpected)"
            } else {
                " were unexpected)"
            });
            complain(out, path, value, message);
        }
    }
}

fn complain<'v>(
    out: &mut Vec<Complaint<'v>>,
    path: &Path<'_>,
    instance: &'v Value,
    message: String,
) {
    out.push(Complaint {
        pointer: path.pointer(),
        instance,
        message,
    });
}

/// The schema item `i` of an array is checked against: its `prefixItems` entry, else `items`.
fn item_node(prefix: &[usize], rest: Option<usize>, i: usize) -> Option<usize> {
    prefix
        .get(i)
        .copied()
        .or(if i < prefix.len() { None } else { rest })
}

fn find(properties: &[(String, usize)], key: &str) -> Option<usize> {
    properties
        .iter()
        .find(|(name, _)| name == key)
        .map(|(_, node)| *node)
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// The type bits a value has: an integral number is both `integer` and `number`.
fn type_bits(value: &Value) -> u8 {
    match value {
        Value::Null => 1,
        Value::Bool(_) => 1 << 1,
        Value::Number(n) if is_integral(n) => (1 << 2) | (1 << 3),
        Value::Number(_) => 1 << 3,
        Value::String(_) => 1 << 4,
        Value::Array(_) => 1 << 5,
        Value::Object(_) => 1 << 6,
    }
}

fn is_integral(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

fn type_message(set: u8, value: &Value) -> String {
    let names: Vec<&str> = TYPE_NAMES
        .iter()
        .enumerate()
        .filter(|(bit, _)| set & (1 << bit) != 0)
        .map(|(_, name)| *name)
        .collect();
    if let [one] = names.as_slice() {
        return format!("{value} is not of type \"{one}\"");
    }
    let listed: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    format!("{value} is not of types {}", listed.join(", "))
}

/// `"x" is not one of "a", "b" or "c"`; past three options, the first two and a count.
fn enum_message(value: &Value, options: &[Value]) -> String {
    let mut out = format!("{value} is not one of ");
    if options.len() <= 3 {
        for (i, option) in options.iter().enumerate() {
            let _ = match i {
                0 => write!(out, "{option}"),
                _ if i == options.len() - 1 => write!(out, " or {option}"),
                _ => write!(out, ", {option}"),
            };
        }
    } else {
        let _ = write!(
            out,
            "{}, {} or {} other candidates",
            options[0],
            options[1],
            options.len() - 2
        );
    }
    out
}

/// A JSON number as an exact integer when it is one, else its double.
enum Exact {
    Int(i128),
    Float(f64),
}

fn exact(n: &Number) -> Exact {
    if let Some(i) = n.as_i64() {
        Exact::Int(i128::from(i))
    } else if let Some(u) = n.as_u64() {
        Exact::Int(i128::from(u))
    } else {
        Exact::Float(n.as_f64().unwrap_or_default())
    }
}

/// Compares two numbers exactly (an integer past 2^53 is not rounded to a double first).
fn compare(a: &Number, b: &Number) -> Ordering {
    match (exact(a), exact(b)) {
        (Exact::Int(a), Exact::Int(b)) => a.cmp(&b),
        (Exact::Float(a), Exact::Float(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
        (Exact::Int(a), Exact::Float(b)) => int_vs_float(a, b),
        (Exact::Float(a), Exact::Int(b)) => int_vs_float(b, a).reverse(),
    }
}

fn int_vs_float(a: i128, b: f64) -> Ordering {
    if b >= 1.0e38 {
        return Ordering::Less;
    }
    if b <= -1.0e38 {
        return Ordering::Greater;
    }
    let whole = b.trunc();
    match a.cmp(&(whole as i128)) {
        Ordering::Equal if b > whole => Ordering::Less,
        Ordering::Equal if b < whole => Ordering::Greater,
        other => other,
    }
}

/// Whether `n / multiple` is an integer, exactly (the remainder of two doubles is exact).
fn is_multiple(n: &Number, m: f64) -> bool {
    if m.fract() == 0.0 && m <= 9_007_199_254_740_991.0 {
        if let Some(u) = n.as_u64() {
            return u % (m as u64) == 0;
        }
        if let Some(i) = n.as_i64() {
            return i % (m as i64) == 0;
        }
    }
    let v = n.as_f64().unwrap_or_default();
    v % m == 0.0
}

/// JSON equality: numbers by value (`1` equals `1.0`), objects regardless of member order.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => compare(a, b) == Ordering::Equal,
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| equal(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

/// Whether no two items are [`equal`]: pairwise for a short list, by a canonical text for a
/// long one (a hostile list of 100,000 items costs n, not n²).
fn all_unique(items: &[Value]) -> bool {
    if items.len() > 32 {
        let mut seen = std::collections::HashSet::with_capacity(items.len());
        return items.iter().all(|item| {
            let mut key = String::new();
            canonical(item, &mut key);
            seen.insert(key)
        });
    }
    for (i, a) in items.iter().enumerate() {
        if items[i + 1..].iter().any(|b| equal(a, b)) {
            return false;
        }
    }
    true
}

/// A text equal for [`equal`] values: integral numbers as integers, members sorted by name.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Number(n) => match exact(n) {
            Exact::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Exact::Float(f) if f.fract() == 0.0 && f.abs() < 1.0e38 => {
                let _ = write!(out, "{}", f as i128);
            }
            Exact::Float(f) => {
                let _ = write!(out, "{f:e}");
            }
        },
        Value::Array(items) => {
            out.push('[');
            for item in items {
                canonical(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (key, member) in members {
                let _ = write!(out, "{}:", Value::String(key.clone()));
                canonical(member, out);
                out.push(',');
            }
            out.push('}');
        }
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

//! The registry: tools in registration order with the `tools/list` pages built once per change
//! (one per era), resources and prompts, the page size of every list, and the subscribers told
//! about changes. A key registered twice is refused unless replaced on purpose.

use std::sync::{Arc, OnceLock, RwLock};

use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::prompts::PromptDef;
use super::registration::RegistrationError;
use super::resources::ResourceDef;
use super::subscriptions::Subscribers;
use super::tool::ToolDef;
use crate::era::Era;
use crate::error::{echo_capped, McpError};
use crate::events::{BusCell, Event};
use crate::lowlevel::reply::Reply;
use crate::lowlevel::ParamHeaderTable;
use crate::name_map::NameMap;

struct ToolSet<S> {
    tools: Vec<Arc<ToolDef<S>>>,
    index: NameMap<usize>,
    /// Each tool's `x-mcp-header` arguments, found once at registration rather than on every
    /// call, in the table the HTTP transport reads.
    param_headers: ParamHeaderTable,
    /// List input and output schemas with their `$ref`s inlined
    /// ([`McpServer::inline_schema_refs`](super::McpServer::inline_schema_refs)).
    inline_refs: bool,
    /// The encoded lists, built on the first `tools/list` after a change: registering n tools
    /// encodes them once, not n times.
    lists: OnceLock<Arc<Lists>>,
}

/// `tools/list` for both eras, encoded.
struct Lists {
    modern_page: Vec<Value>,
    legacy_page: Vec<Value>,
    /// The whole lists, encoded once (what an unpaginated `tools/list` sends).
    modern_raw: Arc<RawValue>,
    legacy_raw: Arc<RawValue>,
}

impl<S: Send + Sync + 'static> ToolSet<S> {
    /// Forgets the encoded lists (the tools changed).
    fn changed(&mut self) {
        self.lists = OnceLock::new();
    }

    fn reindex(&mut self) {
        self.index = self
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.tool.name.clone(), i))
            .collect();
    }

    fn lists(&self) -> Arc<Lists> {
        self.lists.get_or_init(|| Arc::new(self.encode())).clone()
    }

    fn encode(&self) -> Lists {
        let inline = self.inline_refs;
        let encode = |tool: &crate::types::Tool| {
            if !inline {
                return serde_json::to_value(tool).unwrap_or(Value::Null);
            }
            let mut tool = tool.clone();
            inline_schema_refs(&mut tool.input_schema);
            if let Some(output) = &mut tool.output_schema {
                inline_schema_refs(output);
            }
            serde_json::to_value(&tool).unwrap_or(Value::Null)
        };
        let modern_page: Vec<Value> = self.tools.iter().map(|t| encode(&t.tool)).collect();
        let legacy_page: Vec<Value> = self
            .tools
            .iter()
            .map(|t| encode(&t.legacy_definition()))
            .collect();
        Lists {
            modern_raw: raw_array(&modern_page),
            legacy_raw: raw_array(&legacy_page),
            modern_page,
            legacy_page,
        }
    }
}

/// Inlines the `$ref`s of one schema object in place.
fn inline_schema_refs(schema: &mut crate::types::JsonObject) {
    let mut value = Value::Object(std::mem::take(schema));
    super::listed_schema::inline_refs(&mut value);
    if let Value::Object(map) = value {
        *schema = map;
    }
}

/// The variables a resource template bound, by name.
type TemplateVars = std::collections::BTreeMap<String, String>;

pub(crate) struct Registry<S> {
    tools: RwLock<ToolSet<S>>,
    pub(crate) resources: RwLock<Vec<Arc<ResourceDef<S>>>>,
    pub(crate) prompts: RwLock<Vec<Arc<PromptDef<S>>>>,
    pub(crate) page_size: RwLock<Option<usize>>,
    pub(crate) subscribers: Arc<Subscribers>,
}

impl<S: Send + Sync + 'static> Registry<S> {
    /// An empty registry that records its tools' mirrored arguments in `param_headers` (the
    /// table the HTTP transport reads).
    pub(crate) fn new(bus: BusCell, param_headers: ParamHeaderTable) -> Self {
        Self {
            tools: RwLock::new(ToolSet {
                tools: Vec::new(),
                index: NameMap::default(),
                param_headers,
                inline_refs: false,
                lists: OnceLock::new(),
            }),
            resources: RwLock::new(Vec::new()),
            prompts: RwLock::new(Vec::new()),
            page_size: RwLock::new(None),
            subscribers: Arc::new(Subscribers::new(bus)),
        }
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, ToolSet<S>> {
        self.tools.write().unwrap_or_else(|p| p.into_inner())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, ToolSet<S>> {
        self.tools.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a tool; refused if one has its name.
    pub(crate) fn insert(&self, tool: ToolDef<S>) -> Result<(), RegistrationError> {
        let mut set = self.write();
        if set.index.contains_key(&tool.tool.name) {
            return Err(RegistrationError::DuplicateTool {
                name: tool.tool.name,
            });
        }
        let at = set.tools.len();
        set.index.insert(tool.tool.name.clone(), at);
        set.param_headers.set(
            tool.tool.name.clone(),
            tool.tool.param_headers().unwrap_or_default(),
        );
        set.tools.push(Arc::new(tool));
        set.changed();
        Ok(())
    }

    /// Adds a tool, or replaces the one with its name (keeping its place).
    pub(crate) fn replace(&self, tool: ToolDef<S>) {
        let mut set = self.write();
        set.param_headers.set(
            tool.tool.name.clone(),
            tool.tool.param_headers().unwrap_or_default(),
        );
        let tool = Arc::new(tool);
        match set.index.get(&tool.tool.name) {
            Some(&i) => set.tools[i] = tool,
            None => {
                let at = set.tools.len();
                set.index.insert(tool.tool.name.clone(), at);
                set.tools.push(tool);
            }
        }
        set.changed();
    }

    /// Adds a resource or template; refused if one has the same URI (template).
    pub(crate) fn insert_resource(&self, def: ResourceDef<S>) -> Result<(), RegistrationError> {
        insert_new(&self.resources, def, same_uri, |r| {
            RegistrationError::DuplicateResource {
                uri: r.template.as_str().to_owned(),
            }
        })
    }

    /// Adds a resource or template, or replaces the one with the same URI (template).
    pub(crate) fn replace_resource(&self, def: ResourceDef<S>) {
        upsert(&self.resources, def, same_uri);
    }

    /// Adds a prompt; refused if one has its name.
    pub(crate) fn insert_prompt(&self, def: PromptDef<S>) -> Result<(), RegistrationError> {
        insert_new(&self.prompts, def, same_name, |p| {
            RegistrationError::DuplicatePrompt {
                name: p.prompt.name.clone(),
            }
        })
    }

    /// Adds a prompt, or replaces the one with its name.
    pub(crate) fn replace_prompt(&self, def: PromptDef<S>) {
        upsert(&self.prompts, def, same_name);
    }

    /// Lists schemas with their `$ref`s inlined (or not), from now on.
    pub(crate) fn set_inline_refs(&self, on: bool) {
        let mut set = self.write();
        set.inline_refs = on;
        set.changed();
    }

    /// Removes a tool; false if there was none by that name.
    pub(crate) fn remove(&self, name: &str) -> bool {
        let mut set = self.write();
        let Some(&i) = set.index.get(name) else {
            return false;
        };
        set.tools.remove(i);
        set.param_headers.remove(name);
        set.reindex();
        set.changed();
        true
    }

    pub(crate) fn get(&self, name: &str) -> Option<Arc<ToolDef<S>>> {
        let set = self.read();
        // A few tools are compared by name (cheaper than hashing it); many are looked up.
        if set.tools.len() <= crate::members::SCANNED {
            return set.tools.iter().find(|def| def.tool.name == name).cloned();
        }
        set.index.get(name).map(|&i| set.tools[i].clone())
    }

    /// The scopes a call of `method` on `name` (tool, prompt name or resource URI) needs.
    pub(crate) fn required_scopes(&self, method: &str, name: &str) -> Vec<String> {
        match method {
            "tools/call" => self.get(name).map(|t| t.scopes.clone()),
            "prompts/get" => snapshot(&self.prompts)
                .into_iter()
                .find(|p| p.prompt.name == name)
                .map(|p| p.scopes.clone()),
            "resources/read" => self.find_resource(name).map(|(r, _)| r.scopes.clone()),
            _ => None,
        }
        .unwrap_or_default()
    }

    /// The resource serving `uri` and the template's variables; a fixed URI wins over a
    /// template that also matches it.
    pub(crate) fn find_resource(&self, uri: &str) -> Option<(Arc<ResourceDef<S>>, TemplateVars)> {
        let resources = snapshot(&self.resources);
        resources
            .iter()
            .filter(|r| r.is_static())
            .chain(resources.iter().filter(|r| !r.is_static()))
            .find_map(|r| r.template.matches(uri).map(|vars| (r.clone(), vars)))
    }

    /// The names of the tools, in order.
    pub(crate) fn names(&self) -> Vec<String> {
        self.read()
            .tools
            .iter()
            .map(|t| t.tool.name.clone())
            .collect()
    }

    /// How many entries one page of a list holds (every entry when no page size was set).
    fn page_len(&self) -> usize {
        self.page_size
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .unwrap_or(usize::MAX)
            .max(1)
    }

    /// One page of `tools/list` for `era`, from the prebuilt page. The whole list (no page
    /// size, no cursor) is answered with the page as it was encoded when `prebuilt` (no
    /// middleware will read the result), as a value otherwise.
    pub(crate) fn list(
        &self,
        era: Era,
        cursor: Option<&str>,
        prebuilt: bool,
    ) -> Result<Reply, McpError> {
        let size = self.page_len();
        let lists = self.read().lists();
        let (page, raw) = match era {
            Era::Modern => (&lists.modern_page, &lists.modern_raw),
            Era::Legacy => (&lists.legacy_page, &lists.legacy_raw),
        };
        if cursor.is_none() && size >= page.len() && prebuilt {
            return Ok(Reply::Prebuilt {
                field: "tools",
                value: raw.clone(),
            });
        }
        let key = |i: usize| page[i]["name"].as_str().unwrap_or_default().to_owned();
        let (range, next) = page_bounds(page.len(), size, cursor, key)?;
        let mut result = json!({ "tools": &page[range] });
        if let Some(next) = next {
            result["nextCursor"] = Value::String(next);
        }
        Ok(Reply::Value(result))
    }

    /// One page of `items` (a resource, template or prompt list) and the cursor of the next
    /// page, paged like `tools/list`: the same page size, the same cursors, `-32602` for a
    /// cursor this server did not hand out.
    pub(crate) fn page<T>(
        &self,
        mut items: Vec<T>,
        cursor: Option<&str>,
        key: impl Fn(&T) -> &str,
    ) -> Result<(Vec<T>, Option<String>), McpError> {
        let key_at = |i: usize| key(&items[i]).to_owned();
        let (range, next) = page_bounds(items.len(), self.page_len(), cursor, key_at)?;
        items.truncate(range.end);
        items.drain(..range.start);
        Ok((items, next))
    }

    /// `fields` with what is registered (tool and prompt names, resource URIs), for `Debug`.
    pub(crate) fn describe(&self, mut fields: std::fmt::DebugStruct<'_, '_>) -> std::fmt::Result {
        let resources: Vec<String> = snapshot(&self.resources)
            .iter()
            .map(|r| r.template.as_str().to_owned())
            .collect();
        let prompts: Vec<String> = snapshot(&self.prompts)
            .iter()
            .map(|p| p.prompt.name.clone())
            .collect();
        fields
            .field("tools", &self.names())
            .field("resources", &resources)
            .field("prompts", &prompts)
            .finish_non_exhaustive()
    }

    /// Tells every subscriber of both eras (through the bus) that something changed.
    pub(crate) fn announce(&self, event: Event) {
        let _ = self.subscribers.bus.publish(event);
    }
}

/// Where the page at `cursor` starts and ends in a list of `len` entries (`key_at(i)` names
/// entry `i`), `size` to a page, and the next page's cursor if there is one.
///
/// A cursor (opaque to clients: base64url of a small JSON array) carries where the next page
/// starts, the name of the entry it starts with and the name of the last entry sent, so a list
/// that changes between pages neither repeats nor skips: the next page starts at that first
/// entry wherever it is now, or, if it was removed, after the last one sent (entries are added
/// at the end, and a replaced one keeps its place); only when both are gone does the position
/// decide. A cursor this server could not have made is `-32602`.
fn page_bounds(
    len: usize,
    size: usize,
    cursor: Option<&str>,
    key_at: impl Fn(usize) -> String,
) -> Result<(std::ops::Range<usize>, Option<String>), McpError> {
    let start = match cursor {
        None => 0,
        Some(c) => {
            let invalid =
                || McpError::invalid_params(format!("Invalid cursor: {}", echo_capped(c)));
            let (position, next, last): (usize, String, String) = crate::base64::decode_url(c)
                .and_then(|bytes| serde_json::from_slice(&bytes).ok())
                .ok_or_else(invalid)?;
            if position == 0 {
                return Err(invalid());
            }
            let find = |key: &str| (0..len).find(|&i| key_at(i) == key);
            match (find(&next), find(&last)) {
                (Some(i), _) => i,
                (None, Some(i)) => i + 1,
                (None, None) => position.min(len),
            }
        }
    };
    let end = start.saturating_add(size).min(len);
    let next = (end < len).then(|| {
        let cursor = json!([end, key_at(end), key_at(end - 1)]).to_string();
        crate::base64::encode_url(cursor.as_bytes())
    });
    Ok((start..end, next))
}

fn same_uri<S>(a: &ResourceDef<S>, b: &ResourceDef<S>) -> bool {
    a.template.as_str() == b.template.as_str()
}

fn same_name<S>(a: &PromptDef<S>, b: &PromptDef<S>) -> bool {
    a.prompt.name == b.prompt.name
}

/// Appends `item` unless an entry has the same key (`clash` names it then).
fn insert_new<T>(
    list: &RwLock<Vec<Arc<T>>>,
    item: T,
    same: impl Fn(&T, &T) -> bool,
    clash: impl FnOnce(&T) -> RegistrationError,
) -> Result<(), RegistrationError> {
    let mut list = list.write().unwrap_or_else(|p| p.into_inner());
    if list.iter().any(|x| same(x, &item)) {
        return Err(clash(&item));
    }
    list.push(Arc::new(item));
    Ok(())
}

/// Replaces the entry with the same key or appends.
fn upsert<T>(list: &RwLock<Vec<Arc<T>>>, item: T, same: impl Fn(&T, &T) -> bool) {
    let mut list = list.write().unwrap_or_else(|p| p.into_inner());
    match list.iter().position(|x| same(x, &item)) {
        Some(i) => list[i] = Arc::new(item),
        None => list.push(Arc::new(item)),
    }
}

/// Removes the entries `matches` selects; true if there was one.
pub(crate) fn remove_where<T>(list: &RwLock<Vec<Arc<T>>>, matches: impl Fn(&T) -> bool) -> bool {
    let mut list = list.write().unwrap_or_else(|p| p.into_inner());
    let before = list.len();
    list.retain(|x| !matches(x));
    list.len() != before
}

/// A snapshot of the list.
pub(crate) fn snapshot<T>(list: &RwLock<Vec<Arc<T>>>) -> Vec<Arc<T>> {
    list.read().unwrap_or_else(|p| p.into_inner()).clone()
}

/// `values` encoded once as a JSON array.
fn raw_array(values: &[Value]) -> Arc<RawValue> {
    let text = serde_json::to_string(values).unwrap_or_else(|_| "[]".to_owned());
    RawValue::from_string(text)
        .map(Arc::from)
        .unwrap_or_else(|_| unreachable!("serde_json wrote valid JSON"))
}

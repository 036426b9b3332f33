//! [`ToolCall`]: `tools/call` params as the high-level server reads them.

use serde_json::value::RawValue;

use crate::error::McpError;
use crate::lowlevel::Params;
use crate::shared_text::SharedText;

/// The name of the tool to call and its `arguments` as the client wrote them (valid JSON, any
/// type: one that is not an object is `-32602` when the arguments are read, and error texts can
/// quote numbers as the client wrote them).
///
/// Every field of [`CallToolRequestParams`](crate::types::CallToolRequestParams) is checked as
/// serde checks it; those the engine reads elsewhere (`_meta`, `task`, `inputResponses`,
/// `requestState`) only for their JSON type, nothing built.
pub(crate) struct ToolCall {
    pub(crate) name: SharedText,
    pub(crate) arguments: Option<SharedText>,
}

impl ToolCall {
    /// Reads the params: a walk of their members when each is as expected (a name without
    /// escapes, no member twice), serde otherwise, whose complaint is the answer.
    pub(crate) fn read(params: &Params) -> Result<Self, McpError> {
        if let Some(call) = Self::walk(params) {
            return Ok(call);
        }
        let call: Checked = params.decode()?;
        Ok(Self {
            name: call.name.into(),
            arguments: call.arguments.map(|raw| raw.get().into()),
        })
    }

    /// The call, when a walk of the params' members finds everything as serde would accept it
    /// and nothing it would read differently; `None` sends them to serde.
    fn walk(params: &Params) -> Option<Self> {
        let mut name: Option<&str> = None;
        let mut arguments: Option<&str> = None;
        // Members seen, for "no member twice": name, arguments, task, inputResponses,
        // requestState, _meta.
        let mut seen = [false; 6];
        let mut plain = true;
        params.members(|key, value| {
            let (slot, fits) = match key {
                "\"name\"" => {
                    let unescaped =
                        value.len() >= 2 && value.starts_with('"') && !value.contains('\\');
                    if unescaped {
                        name = value.get(1..value.len() - 1);
                    }
                    (0, unescaped)
                }
                "\"arguments\"" => {
                    arguments = Some(value);
                    (1, true)
                }
                "\"task\"" => (2, value == "null" || value.starts_with('{')),
                "\"inputResponses\"" => (3, value == "null" || value.starts_with('{')),
                "\"requestState\"" => (4, value == "null" || value.starts_with('"')),
                "\"_meta\"" => (5, value == "null" || value.starts_with('{')),
                // A name with escapes may spell one of the above.
                other => {
                    plain &= !other.contains('\\');
                    return;
                }
            };
            plain &= fits && !std::mem::replace(&mut seen[slot], true);
        })?;
        Some(Self {
            name: params.keep(name.filter(|_| plain)?),
            arguments: arguments.map(|text| params.keep(text)),
        })
    }
}

/// The params as serde reads them, for its complaints. The fields are
/// [`CallToolRequestParams`](crate::types::CallToolRequestParams)'s, spelled out (no
/// `flatten`, which buffers the whole object).
#[derive(serde::Deserialize)]
struct Checked {
    name: String,
    #[serde(default, deserialize_with = "present")]
    arguments: Option<Box<RawValue>>,
    #[serde(rename = "task", default)]
    _task: Option<AnObject>,
    #[serde(rename = "inputResponses", default)]
    _input_responses: Option<AnObject>,
    #[serde(rename = "requestState", default)]
    _request_state: Option<String>,
    #[serde(rename = "_meta", default)]
    _meta: Option<AnObject>,
}

/// Any JSON object, skipped without being built.
struct AnObject;

impl<'de> serde::Deserialize<'de> for AnObject {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = AnObject;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<AnObject, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(AnObject)
            }
        }
        d.deserialize_map(Visit)
    }
}

/// A field that is present, `null` included (an `Option` alone reads `null` as absent).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Box<RawValue>>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(text: &str) -> Params {
        Params::from_raw(Some(text))
    }

    /// Params whose members the `_meta` scan recorded, as the engine hands them on.
    fn scanned(text: &str) -> Params {
        let mut params = params(text);
        let _ = params.raw_meta();
        params
    }

    fn walked(params: &Params) -> Option<(String, Option<String>)> {
        ToolCall::walk(params).map(|c| (c.name.to_string(), c.arguments.map(|a| a.to_string())))
    }

    /// The walk reads what serde reads, or leaves the params to serde, whether it walks the
    /// text itself or reads where the `_meta` scan found each member.
    #[test]
    fn the_walk_agrees_with_serde() {
        let cases = [
            r#"{"name":"add","arguments":{"a":1}}"#,
            r#"{ "name" : "add" , "arguments" : [1] , "x" : {"name":"no"} }"#,
            r#"{"name":"add","arguments":null}"#,
            r#"{"name":"add"}"#,
            r#"{"arguments":{},"name":"a\"b"}"#,
            r#"{"name":"add","name":"sub"}"#,
            r#"{"name":"add","arguments":{},"arguments":{}}"#,
            r#"{"\u006eame":"add"}"#,
            r#"{"name":5}"#,
            r#"{"name":null}"#,
            r#"{}"#,
            r#"{"name":"t","_meta":{"k":[1,{"_meta":2}]},"task":{"ttl":5},"inputResponses":null}"#,
            r#"{"name":"t","_meta":[]}"#,
            r#"{"name":"t","task":3}"#,
            r#"{"name":"t","inputResponses":"x"}"#,
            r#"{"name":"t","requestState":"s"}"#,
            r#"{"name":"t","requestState":{}}"#,
            r#"{"name":"t","_meta":null,"_meta":{}}"#,
            // More members than the scan records: walked again.
            r#"{"name":"t","a":1,"b":[2],"c":"3","d":{},"e":5,"arguments":{"x":1}}"#,
            r#"{"name":"t","a":1,"b":[2],"c":"3","d":{},"e":5,"name":"u"}"#,
        ];
        for text in cases {
            let by_serde = params(text).decode::<Checked>().map(|c| {
                let arguments = c.arguments.map(|a| a.get().to_owned());
                (c.name, arguments)
            });
            let walked_text = walked(&params(text));
            assert_eq!(walked(&scanned(text)), walked_text, "{text}");
            if let Some(walked) = walked_text {
                assert_eq!(by_serde.as_ref().ok(), Some(&walked), "{text}");
            }
            for params in [params(text), scanned(text)] {
                let read = ToolCall::read(&params)
                    .map(|c| (c.name.to_string(), c.arguments.map(|a| a.to_string())));
                match (&by_serde, &read) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
                    (Err(a), Err(b)) => assert_eq!(a.message(), b.message(), "{text}"),
                    _ => panic!("{text}: serde {by_serde:?}, read {:?}", read.is_ok()),
                }
            }
        }
        // The plain ones are walked.
        for at in [0, 11, 18] {
            assert!(walked(&scanned(cases[at])).is_some(), "{}", cases[at]);
        }
        assert!(walked(&scanned(cases[5])).is_none());
        assert!(walked(&scanned(cases[19])).is_none());
    }
}

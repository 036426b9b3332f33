//! A `#[tool]` of plain parameters decodes each argument straight from the client's text; the
//! same tool made task-capable goes the checked way (the arguments read into a value, checked
//! against the schema, then decoded). Both must answer every call alike, word for word:
//! accepted calls with the same values, refused ones with the same complaint.

use modelctx::prelude::*;
use modelctx::server::{IntoTool, ToolDef};
use modelctx::transport::RawConnection;
use serde_json::Value;

mod support;

/// Two tools with the same parameters and body: `straight` (plain parameters, decoded straight
/// from the text) and `checked` (task-capable, so its calls are checked against the schema as a
/// value).
macro_rules! twin {
    ($name:ident, $($task:tt)*) => {
        /// Shows its arguments.
        #[allow(clippy::too_many_arguments)]
        #[tool($($task)*)]
        async fn $name(
            a: i64,
            b: u8,
            c: f64,
            d: bool,
            e: String,
            f: Option<u16>,
            #[arg(default = 7)] g: i32,
            h: Option<String>,
        ) -> String {
            format!("{a}|{b}|{c:?}|{d}|{e}|{f:?}|{g}|{h:?}")
        }
    };
}

twin!(straight,);
twin!(checked, task = "optional");

/// The arguments of each call, as a client might write them.
const CALLS: &[&str] = &[
    r#"{"a":1,"b":2,"c":3.5,"d":true,"e":"x"}"#,
    r#"{ "a" : -9223372036854775808 , "b" : 255 , "c" : 1e300 , "d" : false , "e" : "\u00e9\n\"" }"#,
    r#"{"a":1,"b":2,"c":3,"d":true,"e":"x","f":65535,"g":-1,"h":"y"}"#,
    r#"{"a":1,"b":2,"c":3,"d":true,"e":"x","f":null,"h":null}"#,
    // Refused: out of range, wrong types, fractions and exponents for integers.
    r#"{"a":9223372036854775808,"b":2,"c":3,"d":true,"e":"x"}"#,
    r#"{"a":1,"b":256,"c":3,"d":true,"e":"x"}"#,
    r#"{"a":1,"b":-1,"c":3,"d":true,"e":"x"}"#,
    r#"{"a":1,"b":-0,"c":3,"d":true,"e":"x"}"#,
    r#"{"a":1.0,"b":2,"c":3,"d":true,"e":"x"}"#,
    r#"{"a":1e2,"b":2,"c":3,"d":true,"e":"x"}"#,
    r#"{"a":"1","b":2,"c":3,"d":true,"e":"x"}"#,
    r#"{"a":1,"b":2,"c":"3","d":true,"e":"x"}"#,
    r#"{"a":1,"b":2,"c":3,"d":1,"e":"x"}"#,
    r#"{"a":1,"b":2,"c":3,"d":true,"e":5}"#,
    r#"{"a":1,"b":2,"c":3,"d":true,"e":"x","f":70000}"#,
    r#"{"a":1,"b":2,"c":3,"d":true,"e":"x","g":2147483648}"#,
    r#"{"a":1,"b":2,"c":3,"d":true,"e":"x","f":[1]}"#,
    // Refused: null where the schema has no null (a defaulted parameter is not an `Option`),
    // members missing or unknown.
    r#"{"a":1,"b":2,"c":3,"d":true,"e":"x","g":null}"#,
    r#"{"a":null,"b":2,"c":3,"d":true,"e":"x"}"#,
    r#"{"a":1,"b":2,"c":3,"d":true,"e":null}"#,
    r#"{"b":2,"c":3,"d":true,"e":"x"}"#,
    r#"{}"#,
    r#"{"a":1,"b":2,"c":3,"d":true,"e":"x","z":0}"#,
    // Written oddly: a member twice (the last counts), an escaped name (accepted both ways),
    // not an object.
    r#"{"a":1,"a":2,"b":2,"c":3,"d":true,"e":"x"}"#,
    r#"{"\u0061":1,"b":2,"c":3,"d":true,"e":"x"}"#,
    r#"[1,2]"#,
    r#"null"#,
    r#""text""#,
];

async fn call(conn: &mut RawConnection, id: usize, tool: &str, arguments: Option<&str>) -> Value {
    let arguments = arguments.map_or(String::new(), |a| format!(r#","arguments":{a}"#));
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}"{arguments}}}}}"#
    );
    conn.send(&line).await.unwrap();
    let mut answer = conn.recv_json().await.expect("an answer");
    answer.as_object_mut().unwrap().remove("id");
    answer
}

#[test]
fn plain_parameters_are_decoded_straight_and_a_task_capable_tool_is_checked() {
    let straight: ToolDef<()> = StraightTool.into_tool();
    assert!(format!("{straight:?}").contains("decoded_straight: true"));
    let checked: ToolDef<()> = CheckedTool.into_tool();
    // (Its task support keeps it off the straight way; its parameters would allow it.)
    assert!(format!("{checked:?}").contains("decoded_straight: true"));
    let constrained: ToolDef<()> = ConstrainedTool.into_tool();
    assert!(format!("{constrained:?}").contains("decoded_straight: false"));
    let structured: ToolDef<()> = StructuredTool.into_tool();
    assert!(format!("{structured:?}").contains("decoded_straight: false"));
}

/// A constraint of its own: checked.
#[tool]
async fn constrained(a: i64, #[arg(range(1..=5))] b: u8) -> String {
    format!("{a}{b}")
}

/// A point.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Point {
    x: i32,
}

/// A struct parameter: checked.
#[tool]
async fn structured(p: Point) -> String {
    p.x.to_string()
}

#[tokio::test]
async fn both_ways_answer_every_call_alike() {
    let server = McpServer::new("args").tool(StraightTool).tool(CheckedTool);
    let mut conn = RawConnection::open(server).await.unwrap();
    support::handshake(&mut conn, "2025-11-25").await;
    let mut accepted = 0;
    let cases = CALLS.iter().map(Some).chain([None]);
    for (i, arguments) in cases.enumerate() {
        let arguments = arguments.copied();
        let a = call(&mut conn, 2 * i + 1, "straight", arguments).await;
        let b = call(&mut conn, 2 * i + 2, "checked", arguments).await;
        assert_eq!(a, b, "arguments {arguments:?}");
        if a["result"]["isError"] != true && a.get("error").is_none() {
            accepted += 1;
        }
    }
    // Accepted: the first four, the member twice and the escaped name; the values came
    // through exactly.
    assert_eq!(accepted, 6);
    let first = call(&mut conn, 1000, "straight", Some(CALLS[1])).await;
    assert_eq!(
        first["result"]["content"][0]["text"],
        "-9223372036854775808|255|1e300|false|é\n\"|None|7|None"
    );
    let nulls = call(&mut conn, 1001, "straight", Some(CALLS[3])).await;
    assert_eq!(
        nulls["result"]["content"][0]["text"],
        "1|2|3.0|true|x|None|7|None"
    );
}

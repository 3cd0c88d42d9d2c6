//! Everything generated from planhost's contract: the JSON Schema (`docs/protocol/schema.json`),
//! the TypeScript declarations the pi extension imports (`integrations/pi/src/protocol.d.ts`),
//! and the method and error-code tables of `docs/protocol.md`. The TypeScript is derived from
//! the JSON Schema, so the two can never disagree. This crate's test fails when a committed copy
//! drifts; `PLANHOST_UPDATE_GENERATED=1 cargo test -p planhost-codegen` rewrites them.
//!
//! ```
//! let ts = planhost_codegen::typescript();
//! assert!(ts.contains("export interface Methods"));
//! assert!(ts.contains("\"plans.resolve\": { params: ResolvePlanParams; result: ApprovalInfo }"));
//! assert!(ts.contains("export interface ExecuteOutputOf {\n  \"Read\": ReadResult;"));
//! ```

use std::fmt::Write as _;

use planhost_core::{CodeClass, ErrorCode, HostTool};
use planhost_protocol::{METHODS, PROTOCOL_VERSION, protocol_schema};
use serde_json::Value;

/// The committed JSON Schema, pretty-printed with a final newline.
pub fn schema_json() -> String {
    let mut text = serde_json::to_string_pretty(&protocol_schema()).unwrap_or_default();
    text.push('\n');
    text
}

/// A TypeScript expression for one JSON Schema.
fn ts(schema: &Value) -> String {
    match schema {
        Value::Bool(true) => return "unknown".into(),
        Value::Bool(false) => return "never".into(),
        Value::Object(_) => {}
        Value::Null | Value::Number(_) | Value::String(_) | Value::Array(_) => {
            return "unknown".into();
        }
    }
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        return r.rsplit('/').next().unwrap_or("unknown").to_owned();
    }
    if let Some(c) = schema.get("const") {
        return c.to_string();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return union(values.iter().map(Value::to_string).collect());
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            let alternatives = union(options.iter().map(ts).collect());
            return match object(schema) {
                Some(base) => format!("{base} & ({alternatives})"),
                None => alternatives,
            };
        }
    }
    if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
        let mut all: Vec<String> = parts.iter().map(|p| format!("({})", ts(p))).collect();
        if let Some(base) = object(schema) {
            all.insert(0, base);
        }
        return all.join(" & ");
    }
    match schema.get("type") {
        Some(Value::Array(types)) => {
            let mut members = Vec::new();
            for t in types.iter().filter_map(Value::as_str) {
                let mut single = schema.clone();
                if let Some(map) = single.as_object_mut() {
                    map.insert("type".into(), Value::String(t.into()));
                }
                members.push(ts(&single));
            }
            union(members)
        }
        Some(Value::String(t)) => match t.as_str() {
            "string" => "string".into(),
            "integer" | "number" => "number".into(),
            "boolean" => "boolean".into(),
            "null" => "null".into(),
            "array" => {
                let item = schema.get("items").map_or_else(|| "unknown".into(), ts);
                if item.contains(' ') {
                    format!("({item})[]")
                } else {
                    format!("{item}[]")
                }
            }
            "object" => object(schema).unwrap_or_else(|| "Record<string, unknown>".into()),
            _ => "unknown".into(),
        },
        _ => object(schema).unwrap_or_else(|| "unknown".into()),
    }
}

/// The object part of a schema (its properties), if it has any.
fn object(schema: &Value) -> Option<String> {
    let props = schema.get("properties").and_then(Value::as_object)?;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = String::from("{ ");
    for (name, prop) in props {
        let optional = if required.contains(&name.as_str()) {
            ""
        } else {
            "?"
        };
        let _ = write!(out, "{name}{optional}: {}; ", ts(prop));
    }
    out.push('}');
    Some(out)
}

fn union(mut members: Vec<String>) -> String {
    members.dedup();
    match members.len() {
        0 => "never".into(),
        1 => members.swap_remove(0),
        _ => members.join(" | "),
    }
}

fn doc_comment(out: &mut String, description: Option<&str>) {
    if let Some(text) = description.filter(|t| !t.is_empty()) {
        out.push_str("/**\n");
        for line in text.lines() {
            let _ = writeln!(out, " * {}", line.replace("*/", "*\\/"));
        }
        out.push_str(" */\n");
    }
}

/// The TypeScript declarations of the whole protocol: every shared type, `tools.execute`'s
/// output by tool (`ExecuteOutputOf`), the `Methods` map (params and result of each method),
/// the notifications, the role rule of each method and the stable error codes.
pub fn typescript() -> String {
    let schema = protocol_schema();
    let mut out = String::new();
    out.push_str(
        "// Generated by planhost-codegen from the protocol crate. Do not edit: regenerate with\n\
         // PLANHOST_UPDATE_GENERATED=1 cargo test -p planhost-codegen\n\n",
    );
    let _ = writeln!(
        out,
        "/** The protocol version these declarations describe. */\nexport type ProtocolVersion = {PROTOCOL_VERSION};\n"
    );
    if let Some(defs) = schema.get("$defs").and_then(Value::as_object) {
        for (name, def) in defs {
            doc_comment(&mut out, def.get("description").and_then(Value::as_str));
            let _ = writeln!(out, "export type {name} = {};\n", ts(def));
        }
    }
    out.push_str(
        "/** `tools.execute`'s output by the tool the call named: what the host answers a call of\n \
         * that tool with (`ExecuteOutput` is the union of these). */\n\
         export interface ExecuteOutputOf {\n",
    );
    for tool in HostTool::RUN_BY_HOST {
        let output = &schema["executeOutputOf"][tool.as_str()];
        let _ = writeln!(out, "  \"{tool}\": {};", ts(output));
    }
    out.push_str("}\n\n");
    out.push_str("/** Every method: its params and its result. */\nexport interface Methods {\n");
    for m in METHODS {
        let _ = writeln!(out, "  /** {} */", m.doc);
        let _ = writeln!(
            out,
            "  \"{}\": {{ params: {}; result: {} }};",
            m.name,
            ts(&schema["methods"][m.name]["params"]),
            ts(&schema["methods"][m.name]["result"])
        );
    }
    out.push_str("}\n\n/** A method name. */\nexport type MethodName = keyof Methods;\n\n");
    out.push_str("/** Which role each method needs (`any`: every connection). */\nexport interface MethodAccess {\n");
    for m in METHODS {
        let _ = writeln!(out, "  \"{}\": \"{}\";", m.name, m.access.as_str());
    }
    out.push_str(
        "}\n\n/** Every notification and its payload. */\nexport interface Notifications {\n",
    );
    if let Some(notes) = schema.get("notifications").and_then(Value::as_object) {
        for (name, payload) in notes {
            let _ = writeln!(out, "  \"{name}\": {};", ts(payload));
        }
    }
    out.push_str("}\n\n/** The JSON-RPC error object; `data.code` is a stable code. */\n");
    let _ = writeln!(out, "export type ProtocolError = {};", ts(&schema["error"]));
    out
}

fn numeric(class: CodeClass) -> String {
    class
        .numeric()
        .map_or_else(|| "—".into(), |n| n.to_string())
}

/// The Markdown table of every method: name, role rule, params, result, what it does.
pub fn method_table() -> String {
    let mut out = String::from(
        "| method | roles | params | result | what it does |\n|---|---|---|---|---|\n",
    );
    for m in METHODS {
        let _ = writeln!(
            out,
            "| `{}` | {} | `{}` | `{}` | {} |",
            m.name,
            m.access.as_str(),
            m.params_type,
            m.result_type,
            m.doc.replace('|', "\\|")
        );
    }
    out
}

/// The Markdown table of every stable code, from the registry.
pub fn error_table() -> String {
    let mut out = String::from("| code | numeric | meaning |\n|---|---|---|\n");
    for code in ErrorCode::ALL {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            code.as_str(),
            numeric(code.class()),
            code.doc().replace('|', "\\|")
        );
    }
    out
}

/// `text` with the part between `<!-- BEGIN name -->` and `<!-- END name -->` replaced by
/// `body`; `None` if the markers are missing.
pub fn splice(text: &str, name: &str, body: &str) -> Option<String> {
    let begin = format!("<!-- BEGIN {name} -->\n");
    let end = format!("<!-- END {name} -->");
    let start = text.find(&begin)? + begin.len();
    let stop = start + text[start..].find(&end)?;
    Some(format!("{}{body}{}", &text[..start], &text[stop..]))
}

//! The whole protocol as one JSON Schema document, generated from the contract.

use planhost_core::{ExecuteOutput, HostTool};
use serde_json::{Map, Value, json};

use crate::contract::{METHODS, NOTIFICATIONS, PROTOCOL_VERSION};

/// `methods.<name>.{description,access,params,result}`, `notifications.<name>`, the error
/// object, the host's tool names, `tools.execute`'s output by tool (`executeOutputOf`), and the
/// shared `$defs`.
pub fn protocol_schema() -> Value {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let mut methods = Map::new();
    for m in METHODS {
        let params = m.params_schema(&mut generator);
        let result = m.result_schema(&mut generator);
        methods.insert(
            m.name.into(),
            json!({ "description": m.doc, "access": m.access, "params": params, "result": result }),
        );
    }
    let mut notes = Map::new();
    for n in NOTIFICATIONS {
        notes.insert(n.name.into(), n.payload_schema(&mut generator).to_value());
    }
    let error = generator.subschema_for::<crate::RpcError>().to_value();
    // The host's canonical tool names, for clients that register or name them (pi's extension
    // types its tool names by this union).
    let host_tool = generator
        .subschema_for::<planhost_core::HostTool>()
        .to_value();
    // `tools.execute`'s output by the tool that ran: `ExecuteOutput` is their untagged union,
    // and a client that knows the tool it called reads the one result type it names.
    let mut execute_output_of = Map::new();
    for tool in HostTool::RUN_BY_HOST {
        if let Some(schema) = ExecuteOutput::schema_of(tool, &mut generator) {
            execute_output_of.insert(tool.as_str().into(), schema.to_value());
        }
    }
    let defs: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "planhost JSON-RPC protocol",
        "protocolVersion": PROTOCOL_VERSION,
        "methods": methods,
        "notifications": notes,
        "error": error,
        "hostTool": host_tool,
        "executeOutputOf": execute_output_of,
        "$defs": defs,
    })
}

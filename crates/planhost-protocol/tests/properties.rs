//! Properties of the request decoder's library half: `ClientRequest::parse` (method and params →
//! a typed request), the `Incoming` / `Response` envelopes and the error codes. The line half
//! (`planhost_service::host::decode_line`: bytes → an envelope or PARSE_ERROR / INVALID_REQUEST, with the id
//! when readable, lone surrogates included) is private to the `planhost` binary, so its
//! properties run against the real binary in `crates/planhost/tests/decoder_props.rs`, and the
//! `protocol_decoder` fuzz target covers both halves (`fuzz/`).
//!
//! Params for the round trip are generated from each method's own JSON Schema (the contract's
//! `protocol_schema()`), so every method of the table is exercised, including ones added later.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::wildcard_enum_match_arm
)]

use std::collections::BTreeMap;

use planhost_core::{CodeClass, ErrorCode};
use planhost_protocol::{
    ClientRequest, Incoming, METHODS, RequestId, Response, RpcError, codes, protocol_schema,
};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------------------------------------
// Generators

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::from),
        field_name().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(field_name(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Real field names of the contract and some near misses, so objects reach the typed params.
fn field_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "sessionId",
            "turnId",
            "toolCallId",
            "proposalId",
            "executionId",
            "protocolVersion",
            "clientName",
            "roles",
            "mode",
            "action",
            "status",
            "limit",
            "session_id",
            "",
        ])
        .prop_map(str::to_owned),
        "[a-zA-Z]{1,10}",
    ]
}

fn method_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(METHODS.iter().map(|m| m.name).collect::<Vec<_>>())
            .prop_map(str::to_owned),
        1 => any::<String>(),
        1 => "[a-z]{1,8}\\.[a-zA-Z]{1,12}",
    ]
}

fn request_id() -> impl Strategy<Value = RequestId> {
    prop_oneof![
        any::<i64>().prop_map(RequestId::Number),
        any::<String>().prop_map(RequestId::String),
    ]
}

/// A JSON instance of a (draft 2020-12) schema, as far as the contract's schemas go: `$ref`,
/// `type` (one or several), `enum`, `const`, `oneOf` / `anyOf`, objects (required fields always,
/// optional ones sometimes), arrays and integer bounds.
fn instance(schema: &Value, defs: &Map<String, Value>, depth: u32) -> BoxedStrategy<Value> {
    let Some(schema) = schema.as_object() else {
        // `true` (anything) and `false` alike: any value will do for a decoder.
        return any_json().boxed();
    };
    if let Some(Value::String(r)) = schema.get("$ref") {
        let name = r.trim_start_matches("#/$defs/");
        let target = defs.get(name).cloned().unwrap_or(Value::Bool(true));
        return instance(&target, defs, depth + 1);
    }
    if let Some(c) = schema.get("const") {
        return Just(c.clone()).boxed();
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        return prop::sample::select(values.clone()).boxed();
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(options)) = schema.get(key) {
            let options: Vec<_> = options
                .iter()
                .map(|o| merged(schema, o, key))
                .map(|o| instance(&o, defs, depth + 1))
                .collect();
            return prop::strategy::Union::new(options).boxed();
        }
    }
    if let Some(Value::Array(all)) = schema.get("allOf") {
        let mut flat = schema.clone();
        flat.remove("allOf");
        let mut flat = Value::Object(flat);
        for part in all {
            flat = merged(flat.as_object().unwrap(), part, "");
        }
        return instance(&flat, defs, depth + 1);
    }
    match schema.get("type") {
        Some(Value::Array(types)) => {
            let options: Vec<_> = types
                .iter()
                .map(|t| {
                    let mut one = schema.clone();
                    one.insert("type".into(), t.clone());
                    instance(&Value::Object(one), defs, depth + 1)
                })
                .collect();
            prop::strategy::Union::new(options).boxed()
        }
        Some(Value::String(t)) => typed(t, schema, defs, depth),
        _ if schema.contains_key("properties") => typed("object", schema, defs, depth),
        _ => any_json().boxed(),
    }
}

/// `option` with the keys of `parent` it does not set itself (schemars puts shared keys beside
/// `oneOf`), minus the combinator itself.
fn merged(parent: &Map<String, Value>, option: &Value, combinator: &str) -> Value {
    let mut out = parent.clone();
    out.remove(combinator);
    if let Some(o) = option.as_object() {
        for (k, v) in o {
            match (out.get_mut(k), v) {
                (Some(Value::Object(a)), Value::Object(b)) if k == "properties" => {
                    a.extend(b.clone());
                }
                (Some(Value::Array(a)), Value::Array(b)) if k == "required" => {
                    a.extend(b.clone());
                }
                _ => {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
    } else {
        return option.clone();
    }
    Value::Object(out)
}

fn typed(
    t: &str,
    schema: &Map<String, Value>,
    defs: &Map<String, Value>,
    depth: u32,
) -> BoxedStrategy<Value> {
    let bound = |k: &str| schema.get(k).and_then(Value::as_i64);
    match t {
        "null" => Just(Value::Null).boxed(),
        "boolean" => any::<bool>().prop_map(Value::from).boxed(),
        "integer" => {
            let lo = bound("minimum").unwrap_or(-1_000);
            let hi = bound("maximum").unwrap_or(1_000_000).max(lo);
            prop_oneof![Just(lo), Just(hi), lo..=hi]
                .prop_map(Value::from)
                .boxed()
        }
        "number" => (-1e6f64..1e6).prop_map(Value::from).boxed(),
        "string" => prop_oneof![
            "[a-zA-Z0-9_-]{1,12}",
            any::<String>(),
            Just("0193a0a0-0000-7000-8000-000000000000".to_owned()),
        ]
        .prop_map(Value::from)
        .boxed(),
        "array" => {
            let items = schema.get("items").cloned().unwrap_or(Value::Bool(true));
            let max = if depth > 6 { 1 } else { 4 };
            prop::collection::vec(instance(&items, defs, depth + 1), 0..max)
                .prop_map(Value::Array)
                .boxed()
        }
        "object" => {
            let required: Vec<String> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            let properties = schema
                .get("properties")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = properties
                .into_iter()
                .map(|(name, sub)| {
                    let value = instance(&sub, defs, depth + 1);
                    if required.contains(&name) {
                        value.prop_map(move |v| Some((name.clone(), v))).boxed()
                    } else {
                        prop::option::of(value)
                            .prop_map(move |v| v.map(|v| (name.clone(), v)))
                            .boxed()
                    }
                })
                .collect();
            fields
                .prop_map(|fields| Value::Object(fields.into_iter().flatten().collect()))
                .boxed()
        }
        _ => any_json().boxed(),
    }
}

/// Each method's params generator, from the contract's schema.
fn params_by_method() -> BTreeMap<&'static str, BoxedStrategy<Value>> {
    let schema = protocol_schema();
    let defs = schema["$defs"].as_object().cloned().unwrap_or_default();
    METHODS
        .iter()
        .map(|m| {
            (
                m.name,
                instance(&schema["methods"][m.name]["params"], &defs, 0),
            )
        })
        .collect()
}

fn valid_request() -> impl Strategy<Value = (String, Value)> {
    let all: Vec<BoxedStrategy<(String, Value)>> = params_by_method()
        .into_iter()
        .map(|(name, params)| params.prop_map(move |p| (name.to_owned(), p)).boxed())
        .collect();
    prop::strategy::Union::new(all)
}

// ---------------------------------------------------------------------------------------------
// Checks

/// What the host sends back for a decoder error (as the host's connection loop builds it).
fn answer(
    id: Option<RequestId>,
    code: ErrorCode,
    message: String,
    field: Option<String>,
) -> Response {
    Response::err(id, RpcError::with_field(code, message, field))
}

/// encode → decode through a whole line gives the same method, params and id.
fn assert_round_trip(id: &RequestId, request: &ClientRequest) -> Result<(), TestCaseError> {
    let line = serde_json::to_string(&Incoming {
        jsonrpc: "2.0".into(),
        id: Some(id.clone()),
        method: request.method().into(),
        params: Some(request.params().unwrap()),
    })
    .unwrap();
    prop_assert!(!line.contains('\n'), "a request line holds a newline");
    let incoming: Incoming = serde_json::from_str(&line).unwrap();
    prop_assert_eq!(incoming.id.as_ref(), Some(id));
    prop_assert_eq!(incoming.method.as_str(), request.method());
    let again = ClientRequest::parse(&incoming.method, incoming.params.unwrap_or_default());
    let again = again.map_err(|e| TestCaseError::fail(format!("{line}: {e:?}")))?;
    prop_assert_eq!(again.method(), request.method());
    let (a, b) = (again.params().unwrap(), request.params().unwrap());
    prop_assert!(same_json(&a, &b), "{:?} became {:?}", request, again);
    Ok(())
}

/// Equal JSON, but for floats, which may come back one rounding step away: serde_json is built
/// without its `float_roundtrip` feature, so a 17-digit float does not always parse back to the
/// same bits (`floats_round_trip_exactly` below, ignored: a known finding, not fixed).
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (Some(x), Some(y)) = (x.as_f64(), y.as_f64()) else {
                return false;
            };
            let d = (x - y).abs();
            x == y || d <= 4.0 * f64::EPSILON * x.abs().max(y.abs()) || d <= f64::MIN_POSITIVE
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

proptest! {
    /// Any method name and any params: a typed request of that method, METHOD_NOT_FOUND for an
    /// unknown name, or INVALID_PARAMS (with a non-empty field when one is named) for a known
    /// one; the error travels in the numeric code of its class and echoes the id.
    #[test]
    fn any_method_and_params_give_a_request_or_a_stable_error(
        method in method_name(),
        params in prop_oneof![any_json(), Just(Value::Null), Just(json!({}))],
        id in request_id(),
    ) {
        let known = planhost_protocol::method(&method).is_some();
        match ClientRequest::parse(&method, params) {
            Ok(request) => {
                prop_assert!(known);
                prop_assert_eq!(request.method(), method.as_str());
                assert_round_trip(&id, &request)?;
            }
            Err(e) => {
                let numeric = if known {
                    prop_assert_eq!(e.code, ErrorCode::InvalidParams);
                    codes::INVALID_PARAMS
                } else {
                    prop_assert_eq!(e.code, ErrorCode::MethodNotFound);
                    prop_assert_eq!(e.field.as_ref(), None);
                    codes::METHOD_NOT_FOUND
                };
                let response = answer(Some(id.clone()), e.code, e.message, e.field);
                let line = serde_json::to_string(&response).unwrap();
                let back: Response = serde_json::from_str(&line).unwrap();
                prop_assert_eq!(back.id.as_ref(), Some(&id));
                let error = back.error.unwrap();
                prop_assert_eq!(error.code, numeric);
                prop_assert_eq!(error.stable_code(), Some(e.code));
            }
        }
    }

    /// Params generated from each method's schema: whenever they parse, the typed request
    /// re-encodes to a line that decodes to the same request with the same id.
    #[test]
    fn valid_requests_round_trip((method, params) in valid_request(), id in request_id()) {
        match ClientRequest::parse(&method, params.clone()) {
            Ok(request) => {
                prop_assert_eq!(request.method(), method.as_str());
                assert_round_trip(&id, &request)?;
            }
            Err(e) => {
                prop_assert_eq!(e.code, ErrorCode::InvalidParams, "{} {}", method, params);
            }
        }
    }

    /// The envelope keeps every id, method and params through a line, and a response echoes its
    /// id, whatever they hold.
    #[test]
    fn envelopes_round_trip(
        id in prop::option::of(request_id()),
        method in any::<String>(),
        params in prop::option::of(any_json()),
        result in any_json(),
    ) {
        let incoming = Incoming { jsonrpc: "2.0".into(), id: id.clone(), method, params };
        let line = serde_json::to_string(&incoming).unwrap();
        prop_assert!(!line.contains('\n'));
        let back: Incoming = serde_json::from_str(&line).unwrap();
        prop_assert_eq!(&back.id, &incoming.id);
        prop_assert_eq!(&back.method, &incoming.method);
        // `"params": null` reads back as absent, which the host takes as `null` too.
        let (a, b) = (back.params.unwrap_or_default(), incoming.params.unwrap_or_default());
        prop_assert!(same_json(&a, &b), "{} became {}", b, a);
        let ok = Response::ok(id.clone(), result);
        let ok_back: Response = serde_json::from_str(&serde_json::to_string(&ok).unwrap()).unwrap();
        prop_assert_eq!(&ok_back.id, &ok.id);
        // A `null` result reads back as absent (`Option<Value>`); no method's result is null.
        let (a, b) = (ok_back.result.unwrap_or_default(), ok.result.unwrap_or_default());
        prop_assert!(same_json(&a, &b), "{} became {}", b, a);
    }

    /// A line whose only fault is a lone UTF-16 surrogate escape is not JSON to serde_json
    /// (the premise of the host's id recovery), while the same line with the escape replaced by
    /// U+FFFD is, with its id.
    #[test]
    fn a_lone_surrogate_is_invalid_json_but_the_rest_of_the_line_is_not(
        id in request_id(),
        text in any::<String>(),
        low in 0u16..0x800,
    ) {
        let body = serde_json::to_string(&text).unwrap();
        let inner = &body[1..body.len() - 1];
        let id_json = serde_json::to_string(&id).unwrap();
        let bad = format!(
            r#"{{"jsonrpc":"2.0","id":{id_json},"method":"app.health","params":{{"x":"{inner}\u{:04x}"}}}}"#,
            0xd800 + low
        );
        prop_assert!(serde_json::from_str::<Value>(&bad).is_err(), "{}", bad);
        let patched = format!(
            r#"{{"jsonrpc":"2.0","id":{id_json},"method":"app.health","params":{{"x":"{inner}\ufffd"}}}}"#
        );
        let value: Value = serde_json::from_str(&patched).unwrap();
        prop_assert_eq!(serde_json::from_value::<RequestId>(value["id"].clone()).ok(), Some(id));
    }
}

/// The round trip is not vacuous: every method of the contract gets params that parse.
#[test]
fn every_method_gets_generated_params_that_parse() {
    use proptest::strategy::ValueTree as _;
    let mut runner = TestRunner::deterministic();
    let mut never = Vec::new();
    for (name, params) in params_by_method() {
        let parsed = (0..400).any(|_| {
            let value = params.new_tree(&mut runner).unwrap().current();
            ClientRequest::parse(name, value).is_ok()
        });
        if !parsed {
            never.push(name);
        }
    }
    assert!(never.is_empty(), "no generated params parse for {never:?}");
}

/// Every stable code travels in the numeric code of its class; a recorded-only reason is an
/// internal error on the wire.
#[test]
fn every_code_has_the_numeric_code_of_its_class() {
    for code in ErrorCode::ALL {
        let error = RpcError::new(*code, "m");
        assert_eq!(error.stable_code(), Some(*code));
        let expected = match code.class() {
            CodeClass::Parse => codes::PARSE_ERROR,
            CodeClass::InvalidRequest => codes::INVALID_REQUEST,
            class => class.numeric().unwrap_or(codes::INTERNAL_ERROR),
        };
        assert_eq!(error.code, expected, "{code:?}");
    }
    assert_eq!(
        RpcError::new(ErrorCode::ParseError, "m").code,
        codes::PARSE_ERROR
    );
    assert_eq!(
        RpcError::new(ErrorCode::InvalidRequest, "m").code,
        codes::INVALID_REQUEST
    );
    assert_eq!(
        RpcError::new(ErrorCode::MethodNotFound, "m").code,
        codes::METHOD_NOT_FOUND
    );
    assert_eq!(
        RpcError::new(ErrorCode::InvalidParams, "m").code,
        codes::INVALID_PARAMS
    );
}

/// Found by `valid_requests_round_trip`: a float with 17 significant digits in any params (here
/// a Read call's `input`) came back one rounding step away after decode → encode → decode,
/// because serde_json was built without `float_roundtrip`: an ask would show a person input that
/// differs from what the agent sent. The workspace now enables `float_roundtrip`.
#[test]
fn floats_round_trip_exactly() {
    let line = r#"{"sessionId":"a","turnId":"A","toolCallId":"-","tool":"Read","input":[-2.5590725897034926e-144]}"#;
    let request =
        ClientRequest::parse("tools.execute", serde_json::from_str(line).unwrap()).unwrap();
    let again = ClientRequest::parse(request.method(), request.params().unwrap()).unwrap();
    let text = serde_json::to_string(&request.params().unwrap()).unwrap();
    let reparsed =
        ClientRequest::parse(request.method(), serde_json::from_str(&text).unwrap()).unwrap();
    assert_eq!(again, request);
    assert_eq!(reparsed, request, "{text}");
}

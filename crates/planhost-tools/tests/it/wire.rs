//! Requests and results as a JSON-RPC `tools.execute` will carry them.

use planhost_tools::{EditRequest, GrepMode, GrepOutput, GrepRequest, ReadRequest, grep};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::workspace;

#[test]
fn requests_deserialize_from_camel_case() {
    let grep: GrepRequest = serde_json::from_value(json!({
        "pattern": "x", "mode": "content", "contextBefore": 2, "contextAfter": 1,
        "caseInsensitive": true, "glob": "*.rs", "limit": 5
    }))
    .unwrap();
    assert_eq!(grep.mode, GrepMode::Content);
    assert_eq!(
        (grep.context_before, grep.context_after),
        (Some(2), Some(1))
    );
    assert!(grep.case_insensitive);

    let edit: EditRequest = serde_json::from_value(json!({
        "path": "a", "oldString": "o", "newString": "n", "replaceAll": true
    }))
    .unwrap();
    assert!(edit.replace_all);

    let defaults: GrepRequest = serde_json::from_value(json!({ "pattern": "x" })).unwrap();
    assert_eq!(defaults.mode, GrepMode::Files);
}

#[test]
fn unknown_fields_and_modes_are_rejected() {
    let typo = serde_json::from_value::<ReadRequest>(json!({ "path": "a", "ofset": 1 }));
    assert!(typo.is_err());
    let mode = serde_json::from_value::<GrepRequest>(json!({ "pattern": "x", "mode": "lines" }));
    assert!(mode.is_err());
}

#[test]
fn results_serialize_with_a_mode_tag() {
    let (_tmp, ctx) = workspace(&[("a.txt", b"needle\n")]);
    let request: GrepRequest =
        serde_json::from_value(json!({ "pattern": "needle", "mode": "count" })).unwrap();
    let result = grep(&ctx, &request).unwrap();
    assert!(matches!(result.output, GrepOutput::Count { .. }));
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        json!({
            "mode": "count",
            "counts": [{ "path": "a.txt", "count": 1 }],
            "truncated": false,
            "skippedNonUtf8": 0
        })
    );
}

//! The committed schema under docs/protocol/ must match the code.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::wildcard_enum_match_arm
)]

use std::path::PathBuf;

fn committed() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/protocol/schema.json")
}

#[test]
fn committed_schema_matches_the_code() {
    let generated =
        serde_json::to_string_pretty(&planhost_protocol::protocol_schema()).unwrap() + "\n";
    if std::env::var_os("PLANHOST_UPDATE_SCHEMA").is_some() {
        std::fs::create_dir_all(committed().parent().unwrap()).unwrap();
        std::fs::write(committed(), &generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(committed())
        .expect("docs/protocol/schema.json missing: run PLANHOST_UPDATE_SCHEMA=1 cargo test -p planhost-protocol");
    pretty_assertions::assert_eq!(
        on_disk,
        generated,
        "the protocol drifted from docs/protocol/schema.json; review, then regenerate with PLANHOST_UPDATE_SCHEMA=1 cargo test -p planhost-protocol"
    );
}

#[test]
fn every_method_has_params_and_result_schemas() {
    let schema = planhost_protocol::protocol_schema();
    for m in planhost_protocol::METHODS {
        let entry = &schema["methods"][m.name];
        assert!(entry["params"].is_object(), "{}", m.name);
        assert!(entry["result"].is_object(), "{}", m.name);
    }
    let names: std::collections::HashSet<_> =
        planhost_protocol::METHODS.iter().map(|m| m.name).collect();
    assert_eq!(
        names.len(),
        planhost_protocol::METHODS.len(),
        "duplicate method names"
    );
}

#[test]
fn unknown_fields_are_refused_and_absent_vs_null_are_distinct() {
    let err = serde_json::from_value::<planhost_protocol::SessionRef>(serde_json::json!({
        "sessionId": "s", "mode": "agent"
    }))
    .unwrap_err();
    assert!(err.to_string().contains("mode"), "{err}");
    let absent: planhost_protocol::ConfigureParams =
        serde_json::from_value(serde_json::json!({ "sessionId": "s" })).unwrap();
    assert_eq!(absent.shell_id, None);
    let null: planhost_protocol::ConfigureParams =
        serde_json::from_value(serde_json::json!({ "sessionId": "s", "shellId": null })).unwrap();
    assert_eq!(null.shell_id, Some(None));
}

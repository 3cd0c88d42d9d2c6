//! Every generated file in the repository matches the contract. After a deliberate change:
//! `PLANHOST_UPDATE_GENERATED=1 cargo test -p planhost-codegen`, then review the diff.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn check(path: &str, generated: &str) {
    let file = repo(path);
    if std::env::var_os("PLANHOST_UPDATE_GENERATED").is_some() {
        fs_err::create_dir_all(file.parent().unwrap()).unwrap();
        fs_err::write(&file, generated).unwrap();
    }
    let on_disk = fs_err::read_to_string(&file).unwrap_or_default();
    pretty_assertions::assert_eq!(
        on_disk,
        generated,
        "{path} drifted from the contract; review, then regenerate with \
         PLANHOST_UPDATE_GENERATED=1 cargo test -p planhost-codegen"
    );
}

#[test]
fn the_committed_schema_matches_the_contract() {
    check(
        "docs/protocol/schema.json",
        &planhost_codegen::schema_json(),
    );
}

#[test]
fn the_committed_typescript_matches_the_contract() {
    check(
        "integrations/pi/src/protocol.d.ts",
        &planhost_codegen::typescript(),
    );
}

#[test]
fn the_protocol_doc_tables_match_the_contract() {
    let path = "docs/protocol.md";
    let text = fs_err::read_to_string(repo(path)).unwrap();
    let text = planhost_codegen::splice(&text, "methods", &planhost_codegen::method_table())
        .expect("docs/protocol.md has <!-- BEGIN methods --> … <!-- END methods -->");
    let text = planhost_codegen::splice(&text, "error-codes", &planhost_codegen::error_table())
        .expect("docs/protocol.md has <!-- BEGIN error-codes --> … <!-- END error-codes -->");
    check(path, &text);
}

#[test]
fn every_method_and_code_is_declared_in_typescript() {
    let ts = planhost_codegen::typescript();
    for m in planhost_protocol::METHODS {
        assert!(
            ts.contains(&format!("\"{}\": {{ params:", m.name)),
            "{}",
            m.name
        );
    }
    for code in planhost_core::ErrorCode::ALL {
        assert!(ts.contains(&format!("\"{}\"", code.as_str())), "{code}");
    }
    // Nothing fell through to an unknown shape except the free-form JSON values.
    let unknowns = ts.matches("unknown").count();
    assert!(
        unknowns < 20,
        "{unknowns} unknown types in the declarations"
    );
}

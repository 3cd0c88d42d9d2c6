//! The extension's own unit tests (`integrations/pi/test/*.test.ts`, node's test runner), run
//! with the node 22 that pi 1.6.0 uses: the logic a pi e2e run cannot steer deterministically,
//! such as when a kept projection may stand in for a `checkpoints.projection` call; and its
//! TypeScript checked against the generated protocol declarations (`tsc`). Both install the
//! extension's npm packages first (`npm ci`, once), so they need nothing run before them.

use std::process::Command;

use planhost_test_support::{Version, ensure_pi};

use crate::harness::extension_dir;

/// The extension's packages (`npm ci` in `integrations/pi` on first use).
fn ensure_packages() {
    planhost_test_support::npm_ci::ensure(
        &extension_dir(),
        &[
            "typebox",
            "typescript",
            "@types/node",
            "@mariozechner/pi-coding-agent",
        ],
        &[],
    )
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_extension_typechecks() {
    ensure_packages();
    let tsc = extension_dir().join("node_modules/typescript/bin/tsc");
    for project in ["tsconfig.protocol.json", "."] {
        let out = Command::new("node")
            .arg(&tsc)
            .args(["-p", project])
            .current_dir(extension_dir())
            .output()
            .expect("run tsc");
        assert!(
            out.status.success(),
            "tsc -p {project} in integrations/pi:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn the_extensions_unit_tests_pass() {
    ensure_packages();
    let install = ensure_pi(Version::V16);
    let dir = extension_dir().join("test");
    let mut files: Vec<_> = fs_err::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".test.ts"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no *.test.ts in {}", dir.display());
    let node = install
        .node_bin_dir
        .as_ref()
        .map_or_else(|| "node".into(), |d| d.join("node"));
    let out = Command::new(node)
        .env("PATH", install.path_env())
        // Type stripping alone does not take parameter properties (`constructor(readonly …)`).
        .arg("--experimental-transform-types")
        .arg("--test")
        .args(&files)
        .output()
        .expect("run node --test");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "node --test failed:\n{text}");
    assert!(text.contains("# fail 0"), "{text}");
}

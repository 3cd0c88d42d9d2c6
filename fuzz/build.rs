//! The host's line decoder (`parse` and `lenient_id`) is private to the `planhost` binary
//! (`crates/planhost/src/serve/conn.rs`), so no library exports it. To fuzz the real code, not a
//! copy that can drift, this copies those two functions verbatim out of `conn.rs` at build time
//! (from `/// Parses one line.` to the unit tests). A build fails loudly if the markers move.

use std::path::Path;

const SOURCE: &str = "../crates/planhost/src/serve/conn.rs";
const START: &str = "/// Parses one line.";
const END: &str = "#[cfg(test)]";

fn main() {
    println!("cargo:rerun-if-changed={SOURCE}");
    let text = fs_err::read_to_string(SOURCE).unwrap_or_else(|e| panic!("{e}"));
    let start = text
        .find(START)
        .unwrap_or_else(|| panic!("{SOURCE} no longer has {START:?}; update fuzz/build.rs"));
    let len = text[start..].find(END).unwrap_or_else(|| {
        panic!("{SOURCE} has no {END:?} after the decoder; update fuzz/build.rs")
    });
    let body = &text[start..start + len];
    for needed in ["fn parse(bytes: &[u8])", "fn lenient_id(bytes: &[u8])"] {
        assert!(
            body.contains(needed),
            "{SOURCE}: `{needed}` is not between the markers; update fuzz/build.rs"
        );
    }
    let out = std::env::var("OUT_DIR").expect("OUT_DIR");
    let dest = Path::new(&out).join("conn_decoder.rs");
    fs_err::write(&dest, body).unwrap_or_else(|e| panic!("{e}"));
}

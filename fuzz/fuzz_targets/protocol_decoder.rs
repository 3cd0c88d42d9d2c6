//! One line through the host's decoder (`planhost_service::host::decode_line`, then `ClientRequest::parse`):
//! never a panic; a request, a client notification, or PARSE_ERROR / INVALID_REQUEST /
//! METHOD_NOT_FOUND / INVALID_PARAMS with the id echoed when it is readable; a typed request
//! re-encodes to a line that decodes to the same method, params and id. The same input, as text,
//! also goes into a lone-surrogate request, which must be PARSE_ERROR carrying its id.
#![no_main]
// `fuzz_target!` itself writes `RUST_LIBFUZZER_DEBUG_PATH` with `std::fs::File::create`.
#![allow(clippy::disallowed_methods)]

use libfuzzer_sys::fuzz_target;
use planhost_fuzz::decoder;
use planhost_protocol::RequestId;

fuzz_target!(|data: &[u8]| {
    decoder::check_line(data);
    let text = String::from_utf8_lossy(data);
    let seed = data.first().copied().unwrap_or(0);
    let id = if seed % 2 == 0 {
        RequestId::Number(i64::from(seed) * 7919 - 1000)
    } else {
        RequestId::String(text.chars().take(8).collect())
    };
    let surrogate = data
        .get(1..3)
        .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
    decoder::check_lone_surrogate(&id, "app.health", &text, surrogate);
});

//! The one end-to-end harness of the `it`, `web` and `pi` tests (feature `host`): temporary
//! homes, the real `planhost` binary as a child (on a socket, with the page, or on stdio),
//! connections that call by type (`call::<methods::X>`) and keep every notification, and the
//! params of the calls tests make most.
//!
//! Raw JSON calls (`call_json`) are for the tests of the wire itself: malformed params,
//! unknown methods and exact shapes.

#![allow(
    clippy::expect_used,
    reason = "a test harness: a failure here fails the test, saying what failed"
)]

mod conn;
pub mod params;
mod process;
mod stdio;

pub use conn::{ALL_ROLES, Conn, assert_code, assert_refused, response_error, stable, streamed};
pub use process::{Captured, Home, Reaped, ServeOptions, Served, WebInfo, lock_held};
pub use stdio::StdioHost;

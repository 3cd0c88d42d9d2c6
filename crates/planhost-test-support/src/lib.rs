//! Test support shared by planhost's tests and benchmarks, so they use one set of fixtures
//! instead of copies: a scripted OpenAI-compatible streaming model server on 127.0.0.1 (no model
//! service is reachable from tests) and bounded polling.
//!
//! ```
//! use planhost_test_support::{ModelServer, Reply};
//!
//! let server = ModelServer::start().unwrap();
//! server.push(Reply::text("<proposed_plan>\n# Plan\n</proposed_plan>\n"));
//! assert!(server.base_url().starts_with("http://127.0.0.1:"));
//! assert_eq!(server.pending(), 1);
//! ```

mod model;
mod poll;

pub use model::{ModelServer, Reply};
pub use poll::{BOUND, poll_until};

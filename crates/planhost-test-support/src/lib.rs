//! Test support shared by planhost's tests and benchmarks, so they use one set of fixtures
//! instead of copies: a scripted OpenAI-compatible streaming model server on 127.0.0.1 (no model
//! service is reachable from tests), rule-driven replies for it, bounded polling, private
//! installs of the real `pi` agent, a driver for pi's RPC mode, and the swapper of swap-race
//! tests ([`swap`]).
//!
//! ```
//! use planhost_test_support::{ModelServer, Reply};
//!
//! let server = ModelServer::start().unwrap();
//! server.push(Reply::text("<proposed_plan>\n# Plan\n</proposed_plan>\n"));
//! assert!(server.base_url().starts_with("http://127.0.0.1:"));
//! assert_eq!(server.pending(), 1);
//! ```

pub mod bench;
pub mod capability;
pub mod claude_install;
mod clock;
mod detached;
#[cfg(feature = "host")]
pub mod host;
mod model;
pub mod npm_ci;
pub mod npm_registry;
pub mod pi_install;
pub mod pi_rpc;
mod poll;
pub mod procs;
pub mod responder;
mod rng;
pub mod swap;

pub use claude_install::{CLAUDE_VERSION, ClaudeInstall, ensure_claude};
pub use clock::{TEST_CLOCK_VAR, TestClock};
pub use detached::{Detached, run_detached};
pub use model::{ModelServer, Reply};
pub use npm_registry::NpmRegistry;
pub use pi_install::{PiInstall, Version, ensure_pi};
pub use pi_rpc::{EventLog, PiOptions, PiSession, SessionStore, ToolEnd, UiRequest};
pub use poll::{BOUND, poll_until};
pub use responder::{ChatRequest, Last, Responder};
pub use rng::Rng;

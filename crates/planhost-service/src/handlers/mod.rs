//! The handlers of the contract's methods, grouped as the protocol groups them. Each takes typed
//! params and returns a typed result; the store is only ever reached on the engine's thread.

pub(crate) mod admin;
pub(crate) mod agent;
pub(crate) mod changes;
pub(crate) mod checkpoints;
pub(crate) mod plans;
pub(crate) mod publications;
pub(crate) mod sessions;

/// Every list's default length.
const DEFAULT_LIMIT: u32 = 100;
/// Every list's longest.
const MAX_LIMIT: u32 = 10_000;

/// The list length a request asks for, the same rule for every list.
pub(crate) fn limit(requested: Option<u32>) -> usize {
    requested.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT) as usize
}

//! Platform-specific spawning and tree containment.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::{Spawned, spawn};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::{Spawned, spawn};

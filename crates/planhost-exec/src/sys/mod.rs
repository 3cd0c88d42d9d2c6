//! Platform-specific spawning and tree containment.

#[cfg(target_os = "linux")]
mod direct;
#[cfg(target_os = "linux")]
pub(crate) use direct::in_use as born_in_cgroups;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::{Spawned, spawn};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::{Spawned, spawn};

//! The command timeout and its bounds.

use std::time::Duration;

use crate::error::{ExecError, Result};

/// A validated command timeout: exactly 60 s when absent, else 1..=300 s.
///
/// The only constructors validate, so a [`crate::CommandSpec`] can never carry an
/// out-of-range value and nothing is spawned for a bad request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeout(Duration);

impl Timeout {
    /// Seed 000 §8: a missing `timeoutMs` means exactly 60,000 ms.
    pub const DEFAULT_MS: u64 = 60_000;
    /// Seed 000 §8: the smallest explicit value accepted.
    pub const MIN_MS: u64 = 1_000;
    /// Seed 000 §8: the largest explicit value accepted.
    pub const MAX_MS: u64 = 300_000;

    /// Validates a request's optional `timeoutMs`.
    pub fn from_request(ms: Option<u64>) -> Result<Self> {
        match ms {
            None => Ok(Self(Duration::from_millis(Self::DEFAULT_MS))),
            Some(ms) if (Self::MIN_MS..=Self::MAX_MS).contains(&ms) => {
                Ok(Self(Duration::from_millis(ms)))
            }
            Some(ms) => Err(ExecError::TimeoutInvalid {
                ms,
                max: Self::MAX_MS,
            }),
        }
    }

    /// An agent's own bound for a shell command it routes through the host: absent means
    /// `default_ms`; an explicit value must be in 1,000..=`max_ms` (`COMMAND_TIMEOUT_INVALID`).
    pub fn within(ms: Option<u64>, default_ms: u64, max_ms: u64) -> Result<Self> {
        match ms {
            None => Ok(Self(Duration::from_millis(default_ms))),
            Some(ms) if (Self::MIN_MS..=max_ms).contains(&ms) => {
                Ok(Self(Duration::from_millis(ms)))
            }
            Some(ms) => Err(ExecError::TimeoutInvalid { ms, max: max_ms }),
        }
    }

    /// The timeout as a duration.
    pub fn duration(self) -> Duration {
        self.0
    }

    /// The timeout in milliseconds.
    pub fn as_millis(self) -> u64 {
        u64::try_from(self.0.as_millis()).unwrap_or(u64::MAX)
    }
}

impl Default for Timeout {
    fn default() -> Self {
        Self(Duration::from_millis(Self::DEFAULT_MS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_is_exactly_sixty_seconds() {
        let t = Timeout::from_request(None).unwrap();
        assert_eq!(t.as_millis(), 60_000);
        assert_eq!(t, Timeout::default());
    }

    #[test]
    fn bounds_are_inclusive() {
        assert_eq!(
            Timeout::from_request(Some(1_000)).unwrap().as_millis(),
            1_000
        );
        assert_eq!(
            Timeout::from_request(Some(300_000)).unwrap().as_millis(),
            300_000
        );
        for bad in [0, 1, 999, 300_001, u64::MAX] {
            let err = Timeout::from_request(Some(bad)).unwrap_err();
            assert_eq!(err.code().as_str(), "COMMAND_TIMEOUT_INVALID", "{bad}");
        }
    }
}

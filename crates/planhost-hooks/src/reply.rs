//! What a hook process prints and how it exits.

/// What a hook prints and how it exits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookReply {
    /// JSON for stdout, if any.
    pub stdout: Option<String>,
    /// Text for stderr, if any (with exit status 2 it is the reason the model sees).
    pub stderr: Option<String>,
    /// The exit status: 0, or 2 for "blocked".
    pub exit: u8,
}

impl HookReply {
    /// A JSON answer on stdout.
    pub fn json(value: &impl serde::Serialize) -> Self {
        Self {
            stdout: Some(serde_json::to_string(value).unwrap_or_default()),
            stderr: None,
            exit: 0,
        }
    }

    /// Nothing to say.
    pub fn nothing() -> Self {
        Self {
            stdout: None,
            stderr: None,
            exit: 0,
        }
    }

    /// Blocked: exit status 2 with the reason.
    pub fn blocked(reason: &str) -> Self {
        Self {
            stdout: None,
            stderr: Some(reason.to_owned()),
            exit: 2,
        }
    }
}

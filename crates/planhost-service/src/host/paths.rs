//! Where the state directory and the socket live (DESIGN.md "Files on disk").

use std::path::{Path, PathBuf};

/// The database file inside the state directory.
pub const DB_FILE: &str = "planhost.sqlite";
/// The lock file that makes one host per state directory.
pub const LOCK_FILE: &str = "planhost.lock";
/// The socket's name.
pub const SOCKET_FILE: &str = "planhost.sock";

/// Resolved locations: where a host keeps its state and where its socket is. The CLI, `serve`
/// and an embedding app resolve them the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// The state directory.
    pub state_dir: PathBuf,
    /// The unix socket.
    pub socket: PathBuf,
}

impl Paths {
    /// `--state-dir`, else `PLANHOST_STATE_DIR`, else `$XDG_STATE_HOME/planhost`, else
    /// `~/.local/state/planhost`. The socket is `--socket`, else `$XDG_RUNTIME_DIR/planhost.sock`
    /// for the default state directory, else inside the state directory — so two hosts on two
    /// explicit state directories never share a socket.
    pub fn resolve(state_dir: Option<&Path>, socket: Option<&Path>) -> Result<Self, NoStateDir> {
        let explicit = state_dir
            .map(Path::to_owned)
            .or_else(|| std::env::var_os("PLANHOST_STATE_DIR").map(PathBuf::from));
        let state_dir = match &explicit {
            Some(dir) => dir.clone(),
            None => default_state_dir()?,
        };
        let socket = match (socket, &explicit, std::env::var_os("XDG_RUNTIME_DIR")) {
            (Some(path), _, _) => path.to_owned(),
            (None, None, Some(runtime)) if !runtime.is_empty() => {
                PathBuf::from(runtime).join(SOCKET_FILE)
            }
            (None, _, _) => state_dir.join(SOCKET_FILE),
        };
        Ok(Self { state_dir, socket })
    }

    /// The database.
    pub fn db(&self) -> PathBuf {
        self.state_dir.join(DB_FILE)
    }

    /// The lock file.
    pub fn lock(&self) -> PathBuf {
        self.state_dir.join(LOCK_FILE)
    }
}

/// Neither `XDG_STATE_HOME` nor `HOME` is set and no state directory was given.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("neither XDG_STATE_HOME nor HOME is set; pass --state-dir")]
pub struct NoStateDir;

fn default_state_dir() -> Result<PathBuf, NoStateDir> {
    if let Some(dir) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir).join("planhost"));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or(NoStateDir)?;
    Ok(PathBuf::from(home).join(".local/state/planhost"))
}

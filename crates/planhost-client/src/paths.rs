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
    /// `~/.local/state/planhost`. The socket is `--socket`, else `PLANHOST_SOCKET`, else
    /// `$XDG_RUNTIME_DIR/planhost.sock` for the default state directory, else inside the state
    /// directory — so two hosts on two explicit state directories never share a socket. An empty
    /// variable counts as unset. The pi extension resolves the same way: `integrations/pi/src/
    /// host.ts`'s `locations` is checked against `integrations/pi/test/paths.cases.json`, which
    /// a test here writes from these rules.
    pub fn resolve(state_dir: Option<&Path>, socket: Option<&Path>) -> Result<Self, NoStateDir> {
        Self::resolve_in(state_dir, socket, |name| std::env::var_os(name))
    }

    /// [`Paths::resolve`] with the environment given.
    fn resolve_in(
        state_dir: Option<&Path>,
        socket: Option<&Path>,
        env: impl Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Result<Self, NoStateDir> {
        let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let explicit = state_dir
            .map(Path::to_owned)
            .or_else(|| var("PLANHOST_STATE_DIR"));
        let state_dir = match &explicit {
            Some(dir) => dir.clone(),
            None => match (var("XDG_STATE_HOME"), var("HOME")) {
                (Some(state), _) => state.join("planhost"),
                (None, Some(home)) => home.join(".local/state/planhost"),
                (None, None) => return Err(NoStateDir),
            },
        };
        let socket = match (
            socket,
            var("PLANHOST_SOCKET"),
            &explicit,
            var("XDG_RUNTIME_DIR"),
        ) {
            (Some(path), _, _, _) => path.to_owned(),
            (None, Some(path), _, _) => path,
            (None, None, None, Some(runtime)) => runtime.join(SOCKET_FILE),
            (None, None, _, _) => state_dir.join(SOCKET_FILE),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(vars: &[(&str, &str)], state: Option<&str>, socket: Option<&str>) -> Paths {
        let env = |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| std::ffi::OsString::from(v))
        };
        Paths::resolve_in(state.map(Path::new), socket.map(Path::new), env).unwrap()
    }

    #[test]
    fn the_rules_the_cli_the_host_and_the_pi_extension_share() {
        let home = [("HOME", "/h")];
        let p = resolve(&home, None, None);
        assert_eq!(p.state_dir, Path::new("/h/.local/state/planhost"));
        assert_eq!(
            p.socket,
            Path::new("/h/.local/state/planhost/planhost.sock")
        );
        let p = resolve(&[("HOME", "/h"), ("XDG_RUNTIME_DIR", "/run/u")], None, None);
        assert_eq!(
            p.socket,
            Path::new("/run/u/planhost.sock"),
            "the default state dir's socket"
        );
        let p = resolve(
            &[("XDG_RUNTIME_DIR", "/run/u"), ("PLANHOST_STATE_DIR", "/s")],
            None,
            None,
        );
        assert_eq!(
            p.socket,
            Path::new("/s/planhost.sock"),
            "an explicit state dir's own socket"
        );
        let p = resolve(
            &[("HOME", "/h"), ("PLANHOST_SOCKET", "/x.sock")],
            None,
            None,
        );
        assert_eq!(p.socket, Path::new("/x.sock"));
        let p = resolve(
            &[("PLANHOST_SOCKET", "/x.sock")],
            Some("/d"),
            Some("/y.sock"),
        );
        assert_eq!(
            (p.state_dir.as_path(), p.socket.as_path()),
            (Path::new("/d"), Path::new("/y.sock"))
        );
        let p = resolve(
            &[
                ("HOME", "/h"),
                ("PLANHOST_STATE_DIR", ""),
                ("XDG_STATE_HOME", "/x"),
            ],
            None,
            None,
        );
        assert_eq!(
            p.state_dir,
            Path::new("/x/planhost"),
            "an empty variable is unset"
        );
        assert!(Paths::resolve_in(None, None, |_| None).is_err());
    }

    /// The environments `paths.cases.json` holds: every rule, alone and against the ones it
    /// overrides. A case needs `HOME` or `XDG_STATE_HOME` (without both the CLI refuses, and the
    /// extension, which never resolves without the binary, is not asked).
    const CASES: &[&[(&str, &str)]] = &[
        &[("HOME", "/h")],
        &[("HOME", "/h"), ("XDG_STATE_HOME", "/x")],
        &[("HOME", "/h"), ("XDG_RUNTIME_DIR", "/run/u")],
        &[
            ("HOME", "/h"),
            ("XDG_RUNTIME_DIR", "/run/u"),
            ("PLANHOST_STATE_DIR", "/s"),
        ],
        &[("XDG_STATE_HOME", "/x"), ("XDG_RUNTIME_DIR", "/run/u")],
        &[("HOME", "/h"), ("PLANHOST_SOCKET", "/x.sock")],
        &[
            ("HOME", "/h"),
            ("PLANHOST_SOCKET", "/x.sock"),
            ("PLANHOST_STATE_DIR", "/s"),
        ],
        &[
            ("HOME", "/h"),
            ("PLANHOST_SOCKET", "/x.sock"),
            ("XDG_RUNTIME_DIR", "/run/u"),
        ],
        &[("HOME", "/h"), ("PLANHOST_STATE_DIR", "/s")],
        &[
            ("HOME", "/h"),
            ("PLANHOST_STATE_DIR", ""),
            ("XDG_STATE_HOME", "/x"),
        ],
        &[
            ("HOME", "/h"),
            ("PLANHOST_SOCKET", ""),
            ("XDG_RUNTIME_DIR", ""),
        ],
        &[
            ("HOME", "/h"),
            ("XDG_STATE_HOME", ""),
            ("XDG_RUNTIME_DIR", "/run/u"),
        ],
    ];

    /// The pi extension cannot call this code before it has a socket to call, so it spells the
    /// rules in TypeScript; this table, written from the rules above, is what its unit test
    /// (`integrations/pi/test/paths.test.ts`) holds it to. `PLANHOST_UPDATE_GENERATED=1`
    /// rewrites the file after a change to the rules.
    #[test]
    fn the_pi_extensions_table_is_written_from_these_rules() {
        let cases: Vec<serde_json::Value> = CASES
            .iter()
            .map(|vars| {
                let p = resolve(vars, None, None);
                let env: serde_json::Map<String, serde_json::Value> = vars
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).into()))
                    .collect();
                serde_json::json!({
                    "env": env,
                    "stateDir": p.state_dir.display().to_string(),
                    "socket": p.socket.display().to_string(),
                })
            })
            .collect();
        let text = format!("{}\n", serde_json::to_string_pretty(&cases).expect("json"));
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../integrations/pi/test/paths.cases.json");
        if std::env::var_os("PLANHOST_UPDATE_GENERATED").is_some() {
            fs_err::write(&file, &text).expect("write the table");
        }
        let on_disk = fs_err::read_to_string(&file).unwrap_or_default();
        assert!(
            on_disk == text,
            "{} is not what the rules give; run PLANHOST_UPDATE_GENERATED=1 cargo test -p planhost-service paths, then make integrations/pi/src/host.ts agree",
            file.display()
        );
    }
}

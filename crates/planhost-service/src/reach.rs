//! What a shell command reaches beyond the files it reads (DESIGN decision 14): planhost's own
//! approval surfaces (its binary, socket, database, web token, page), or a program that starts
//! processes outside planhost's reach. Found from the command's words and programs against the
//! host's own paths; the policy turns it into a denial in Plan mode.

use std::path::{Path, PathBuf};
use std::sync::{PoisonError, RwLock};

use planhost_core::CommandReach;

/// Programs that start processes outside the process tree of the command that runs them, so
/// that nothing they run can be stopped with it or told apart from a person's own: a service
/// manager, a scheduler, a terminal multiplexer's server, a remote shell.
pub(crate) const ESCAPERS: &[&str] = &[
    "systemd-run",
    "systemctl",
    "at",
    "batch",
    "crontab",
    "tmux",
    "screen",
    "zellij",
    "ssh",
    "loginctl",
    "machinectl",
    "busctl",
    "dbus-send",
    "gdbus",
    "launchctl",
    "disown",
];

/// The names planhost's binaries go by.
const PLANHOST_PROGRAMS: &[&str] = &["planhost", "planhost-hook"];

/// Where this host's approval surfaces are, as the host knows them.
#[derive(Debug, Default)]
pub(crate) struct Surfaces {
    inner: RwLock<Known>,
}

#[derive(Debug, Default, Clone)]
struct Known {
    /// The state directory: the database, `web.json`, the lock.
    state_dir: Option<PathBuf>,
    /// The socket.
    socket: Option<PathBuf>,
    /// The page's addresses (`127.0.0.1:7766`, `planhost.localhost:7766`).
    page: Vec<String>,
    /// The file names planhost's binaries have here, besides their usual names.
    programs: Vec<String>,
}

impl Surfaces {
    /// The state directory.
    pub(crate) fn set_state_dir(&self, dir: &Path) {
        self.write().state_dir = Some(dir.to_path_buf());
    }

    /// The socket a host serves.
    pub(crate) fn set_socket(&self, socket: &Path) {
        self.write().socket = Some(socket.to_path_buf());
    }

    /// An address the page serves.
    pub(crate) fn add_page(&self, address: String) {
        let mut known = self.write();
        if !known.page.contains(&address) {
            known.page.push(address);
        }
    }

    /// The file name of this host's own binary.
    pub(crate) fn add_program(&self, name: String) {
        let mut known = self.write();
        if !known.programs.contains(&name) {
            known.programs.push(name);
        }
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Known> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// What `command` reaches. `programs` are the programs it would start, as the classifier
    /// read them.
    pub(crate) fn reach(&self, command: &str, programs: &[String]) -> CommandReach {
        let known = self
            .inner
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let is_planhost = |name: &str| {
            let base = name.rsplit('/').next().unwrap_or(name);
            PLANHOST_PROGRAMS.contains(&base) || known.programs.iter().any(|p| p == base)
        };
        if let Some(program) = programs.iter().find(|p| is_planhost(p)) {
            return CommandReach::ApprovalSurface {
                what: format!(
                    "the `{}` program",
                    program.rsplit('/').next().unwrap_or(program)
                ),
            };
        }
        for word in words(command) {
            let path_hit = |p: &Option<PathBuf>| {
                p.as_ref()
                    .and_then(|p| p.to_str())
                    .is_some_and(|p| !p.is_empty() && word.contains(p))
            };
            if path_hit(&known.socket) {
                return CommandReach::ApprovalSurface {
                    what: "planhost's socket".into(),
                };
            }
            if path_hit(&known.state_dir)
                || word.contains("web.json")
                || word.contains("planhost.sqlite")
            {
                return CommandReach::ApprovalSurface {
                    what: "planhost's state directory (its database and the page's token)".into(),
                };
            }
            if word.contains("planhost.localhost")
                || known.page.iter().any(|a| word.contains(a.as_str()))
            {
                return CommandReach::ApprovalSurface {
                    what: "planhost's web page".into(),
                };
            }
        }
        if let Some(program) = programs.iter().find(|p| {
            let base = p.rsplit('/').next().unwrap_or(p);
            ESCAPERS.contains(&base)
        }) {
            return CommandReach::EscapesScope {
                program: program.rsplit('/').next().unwrap_or(program).to_owned(),
            };
        }
        CommandReach::Inside
    }
}

/// The command's words, split at whitespace, quotes and shell operators: an over-approximation
/// of what its arguments say (a path inside a quoted string is still found).
fn words(command: &str) -> impl Iterator<Item = &str> {
    command
        .split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '\'' | '"'
                        | ';'
                        | '&'
                        | '|'
                        | '('
                        | ')'
                        | '<'
                        | '>'
                        | '`'
                        | '$'
                        | '='
                        | '{'
                        | '}'
                )
        })
        .filter(|w| !w.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn surfaces() -> Surfaces {
        let s = Surfaces::default();
        s.set_state_dir(Path::new("/home/u/.local/state/planhost"));
        s.set_socket(Path::new("/run/user/1000/planhost.sock"));
        s.add_page("127.0.0.1:7766".into());
        s
    }

    fn reach(command: &str, programs: &[&str]) -> CommandReach {
        let programs: Vec<String> = programs.iter().map(|p| (*p).to_owned()).collect();
        surfaces().reach(command, &programs)
    }

    #[test]
    fn planhost_by_any_path_its_socket_state_and_page_are_surfaces() {
        let surface =
            |c: &str, p: &[&str]| matches!(reach(c, p), CommandReach::ApprovalSurface { .. });
        assert!(surface("planhost approve abc", &["planhost"]));
        assert!(surface(
            "/usr/local/bin/planhost approve abc",
            &["/usr/local/bin/planhost"]
        ));
        // The classifier names every program a line starts, through wrappers and `sh -c`.
        assert!(surface("xargs planhost approve", &["xargs", "planhost"]));
        assert!(surface("sh -c 'planhost-hook x'", &["sh", "planhost-hook"]));
        assert!(surface(
            "socat - UNIX:/run/user/1000/planhost.sock",
            &["socat"]
        ));
        assert!(surface("cat ~/.local/state/planhost/web.json", &["cat"]));
        assert!(surface(
            "cat /home/u/.local/state/planhost/planhost.sqlite",
            &["cat"]
        ));
        assert!(surface("curl http://127.0.0.1:7766/", &["curl"]));
        assert!(surface("curl planhost.localhost:7766", &["curl"]));
        // The repository's own files are not surfaces.
        assert_eq!(
            reach("ls crates/planhost-core", &["ls"]),
            CommandReach::Inside
        );
        assert_eq!(
            reach("cat docs/planhost.md", &["cat"]),
            CommandReach::Inside
        );
    }

    #[test]
    fn launchers_outside_the_tree_escape_by_program_not_by_word() {
        assert_eq!(
            reach("systemd-run --user sh -c 'x'", &["systemd-run", "sh"]),
            CommandReach::EscapesScope {
                program: "systemd-run".into()
            }
        );
        // The word "at" in an argument is not the program `at`.
        assert_eq!(reach("grep at notes.txt", &["grep"]), CommandReach::Inside);
    }
}

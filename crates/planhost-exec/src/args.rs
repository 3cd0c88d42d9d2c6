//! How a command string becomes the shell's argument vector, per dialect.
//!
//! Pure so that the Windows forms are tested here; only applying [`Arg::Raw`] is Windows-only.

use crate::shell::Dialect;

/// One argument for the shell process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// Passed as one argv element (quoted by the OS layer when needed).
    Plain(String),
    /// Appended to the Windows command line verbatim (`cmd.exe` does its own parsing).
    Raw(String),
}

/// The arguments that make the shell run `command` once and exit.
///
/// Posix is `bash -c <command>`: not a login shell and not interactive, so no profile runs.
pub fn shell_args(dialect: Dialect, command: &str) -> Vec<Arg> {
    match dialect {
        Dialect::Posix => vec![Arg::Plain("-c".into()), Arg::Plain(command.into())],
        Dialect::Powershell => ["-NoLogo", "-NoProfile", "-NonInteractive", "-Command"]
            .into_iter()
            .map(|a| Arg::Plain(a.into()))
            .chain([Arg::Plain(command.into())])
            .collect(),
        // /d skips AutoRun, /s makes cmd strip exactly the outer quotes we add, /c runs and exits.
        Dialect::Cmd => vec![
            Arg::Plain("/d".into()),
            Arg::Plain("/s".into()),
            Arg::Plain("/c".into()),
            Arg::Raw(format!("\"{command}\"")),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posix_is_bash_dash_c_without_login() {
        assert_eq!(
            shell_args(Dialect::Posix, "echo 'hi' && ls"),
            [
                Arg::Plain("-c".into()),
                Arg::Plain("echo 'hi' && ls".into())
            ]
        );
    }

    #[test]
    fn powershell_skips_profile_and_interaction() {
        let args = shell_args(Dialect::Powershell, "Get-ChildItem");
        assert_eq!(args.last(), Some(&Arg::Plain("Get-ChildItem".into())));
        assert!(args.contains(&Arg::Plain("-NoProfile".into())));
        assert!(args.contains(&Arg::Plain("-NonInteractive".into())));
    }

    #[test]
    fn cmd_wraps_the_line_once_for_slash_s() {
        assert_eq!(
            shell_args(Dialect::Cmd, r#"echo "a b" & dir"#).last(),
            Some(&Arg::Raw(r#""echo "a b" & dir""#.into()))
        );
    }
}

//! The explicit environment every Bash command gets: nothing else leaks from the host.

/// Where one allowed variable's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvValue {
    /// The host's value; the variable is left out when the host has none.
    Host,
    /// The host's value, or this default when the host has none.
    HostOr(&'static str),
    /// Always this value, whatever the host has.
    Fixed(&'static str),
}

/// The complete allow-list for Bash's environment. The host process may hold API keys and
/// session tokens; a command (and anything the model asks it to print) sees only these.
///
/// A host value that is not valid UTF-8 counts as unset (the runner passes `String`s).
pub const BASH_ENV: &[(&str, EnvValue)] = &[
    // Commands find `git`, `cargo`, `rg` where the user's own terminal finds them. The default
    // is only for a host started with no PATH at all.
    ("PATH", EnvValue::HostOr("/usr/local/bin:/usr/bin:/bin")),
    // Tools locate their configuration under it (git's identity, cargo's registry cache).
    ("HOME", EnvValue::Host),
    // Temp files go where the host's do (a per-user directory on macOS).
    ("TMPDIR", EnvValue::Host),
    // The runner decodes output as UTF-8; a UTF-8 locale keeps tools from emitting legacy
    // encodings. LC_ALL defaults too, so messages and `sort`/`ls` order are the same on every
    // machine unless the user pinned a locale explicitly.
    ("LANG", EnvValue::HostOr("C.UTF-8")),
    ("LC_ALL", EnvValue::HostOr("C.UTF-8")),
    // There is no terminal: stdout is a pipe read by a model, so no colours, cursor movement or
    // pager control sequences.
    ("TERM", EnvValue::Fixed("dumb")),
    // Lets scripts and hooks tell that an agent, not a person, is running them.
    ("PLANHOST", EnvValue::Fixed("1")),
    // Windows processes misbehave without these (DLL and `cmd` lookup, executable extensions,
    // per-user and temp directories). Not built or tested in this CI.
    #[cfg(windows)]
    ("SystemRoot", EnvValue::Host),
    #[cfg(windows)]
    ("ComSpec", EnvValue::Host),
    #[cfg(windows)]
    ("PATHEXT", EnvValue::Host),
    #[cfg(windows)]
    ("USERPROFILE", EnvValue::Host),
    #[cfg(windows)]
    ("TEMP", EnvValue::Host),
    #[cfg(windows)]
    ("TMP", EnvValue::Host),
];

/// Builds the environment from [`BASH_ENV`], reading host values through `host`.
///
/// Taking the lookup as a function keeps this pure: tests never have to mutate the process
/// environment.
pub fn bash_env(host: impl Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    BASH_ENV
        .iter()
        .filter_map(|&(name, value)| {
            let value = match value {
                EnvValue::Host => host(name)?,
                EnvValue::HostOr(default) => host(name).unwrap_or_else(|| default.to_owned()),
                EnvValue::Fixed(fixed) => fixed.to_owned(),
            };
            Some((name.to_owned(), value))
        })
        .collect()
}

/// Reads a host variable; unset and non-UTF-8 values are both `None`.
pub(crate) fn host_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_apply_only_when_the_host_has_nothing() {
        let env = bash_env(|name| match name {
            "PATH" => Some("/opt/bin".to_owned()),
            "LANG" => Some("de_DE.UTF-8".to_owned()),
            "TERM" => Some("xterm-256color".to_owned()),
            "PLANHOST" => Some("0".to_owned()),
            _ => None,
        });
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("PATH"), Some("/opt/bin"));
        assert_eq!(get("LANG"), Some("de_DE.UTF-8"));
        assert_eq!(get("LC_ALL"), Some("C.UTF-8"));
        assert_eq!(get("TERM"), Some("dumb"));
        assert_eq!(get("PLANHOST"), Some("1"));
        assert_eq!(get("HOME"), None);
    }

    #[test]
    fn nothing_outside_the_allow_list_is_read() {
        let env = bash_env(|name| Some(format!("host-{name}")));
        let names: Vec<&str> = env.iter().map(|(n, _)| n.as_str()).collect();
        let allowed: Vec<&str> = BASH_ENV.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, allowed);
    }
}

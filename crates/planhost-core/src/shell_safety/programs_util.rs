//! Option matching shared by the program rules.

/// `--name[=v]` where `name` is a non-empty prefix of `long` (getopt and git accept
/// unambiguous abbreviations, so `--out` is `--output`).
pub(super) fn long_is(arg: &str, long: &str) -> bool {
    arg.strip_prefix("--")
        .map(|rest| rest.split('=').next().unwrap_or(rest))
        .is_some_and(|name| !name.is_empty() && long.starts_with(name))
}

/// The reason for a `sed` script this reader does not understand.
pub(super) fn reading_error(script: &str) -> String {
    format!("could not check the `sed` script `{}`", script.trim())
}

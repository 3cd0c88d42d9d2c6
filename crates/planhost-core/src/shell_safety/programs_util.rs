//! Option matching shared by the program rules.

/// `--name[=v]` where `name` is a non-empty prefix of `long` (getopt and git accept
/// unambiguous abbreviations, so `--out` is `--output`).
pub(super) fn long_is(arg: &str, long: &str) -> bool {
    arg.strip_prefix("--")
        .map(|rest| rest.split('=').next().unwrap_or(rest))
        .is_some_and(|name| !name.is_empty() && long.starts_with(name))
}

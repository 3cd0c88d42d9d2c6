//! DESIGN decision 15: a command planhost admits unasked must be read-only in fact, and git runs
//! programs that repository or user configuration names (`core.fsmonitor` on `status`, a
//! `.gitattributes` textconv driver on `diff`, `gpg.program` on a signature, a pager). For such
//! a run, the runner gives git configuration of the command-line scope (git's `GIT_CONFIG_COUNT`
//! / `GIT_CONFIG_KEY_<n>` / `GIT_CONFIG_VALUE_<n>`, which outrank every file) that names no
//! program of the repository's, and drops the environment variables that would name one.
//!
//! What configuration alone cannot switch off — `diff.external` and a driver's `diff.<d>.command`
//! — the host finds before the command is admitted ([`program_keys`]) and asks a person instead.

use std::path::Path;

/// Keys set for every unasked run, whatever the repository says: the programs git would run
/// become none, or `cat`/`false`, which the runner names, not the repository.
const FIXED: &[(&str, &str)] = &[
    // `git status` runs the fsmonitor hook.
    ("core.fsmonitor", "false"),
    // Hooks do not run on reads, but a hooks path is a program path.
    ("core.hooksPath", "/dev/null"),
    // No pager runs without a terminal; named here in case one is forced.
    ("core.pager", "cat"),
    // `git log` shows signatures, running gpg, when this is set.
    ("log.showSignature", "false"),
    // `--show-signature` runs the configured program: `false` fails the check and runs nothing
    // of the repository's.
    ("gpg.program", "false"),
    ("gpg.openpgp.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    // Global attributes could select a textconv or filter driver.
    ("core.attributesFile", "/dev/null"),
];

/// Environment variables that name a program git (or what it starts) would run, or point git at
/// other configuration: none of them reaches an unasked run.
const DROPPED: &[&str] = &[
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
    "GIT_PAGER",
    "PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_PROXY_COMMAND",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
    "BASH_ENV",
    "ENV",
];

/// Whether an unasked run drops `name` from the environment it was given.
pub fn dropped(name: &str) -> bool {
    DROPPED.contains(&name)
        || name.starts_with("GIT_CONFIG_KEY_")
        || name.starts_with("GIT_CONFIG_VALUE_")
}

/// The environment an unasked run gets on top of its own: the fixed keys, then `drivers`' keys
/// (`diff.<d>.textconv`, `filter.<d>.clean`, … found in the repository) each set so that it
/// runs nothing of the repository's (a textconv or a clean or smudge filter becomes `cat`, which
/// passes the bytes through; a process filter becomes none and not required).
pub fn unasked_env(drivers: &[String]) -> Vec<(String, String)> {
    let mut keys: Vec<(String, String)> = FIXED
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    for key in drivers {
        let lower = key.to_ascii_lowercase();
        if lower.ends_with(".textconv") || lower.ends_with(".clean") || lower.ends_with(".smudge") {
            keys.push((key.clone(), "cat".into()));
        } else if lower.ends_with(".process") {
            keys.push((key.clone(), String::new()));
            if let Some(driver) = key.strip_suffix(&key[key.len() - ".process".len()..]) {
                keys.push((format!("{driver}.required"), "false".into()));
            }
        }
    }
    let mut env = vec![
        ("GIT_CONFIG_COUNT".to_owned(), keys.len().to_string()),
        ("GIT_PAGER".to_owned(), "cat".to_owned()),
        ("PAGER".to_owned(), "cat".to_owned()),
        // Reads take no lock and write no index refresh.
        ("GIT_OPTIONAL_LOCKS".to_owned(), "0".to_owned()),
    ];
    for (i, (k, v)) in keys.into_iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{i}"), k));
        env.push((format!("GIT_CONFIG_VALUE_{i}"), v));
    }
    env
}

/// What the repository at `cwd` configures that names a program: every key of a diff or filter
/// driver, and `diff.external`. Read with git itself, in `cwd`, under `env` (the run's own
/// environment, less what [`dropped`] drops), with nothing of the repository run (reading
/// configuration runs no program). `None` when git is not there or `cwd` is in no repository.
pub fn program_keys(cwd: &Path, env: &[(String, String)]) -> Option<Vec<(String, String)>> {
    let mut command = std::process::Command::new("git");
    command
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().filter(|(k, _)| !dropped(k)).map(|(k, v)| (k, v)))
        .args([
            "config",
            "--null",
            "--get-regexp",
            r"^(diff\.external|diff\..+\.(textconv|command)|filter\..+\.(clean|smudge|process))$",
        ])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let out = command.output().ok()?;
    // Exit 1: no such key; anything else but 0: not a repository, or an error.
    match out.status.code() {
        Some(0) => {}
        Some(1) => return Some(Vec::new()),
        _ => return None,
    }
    Some(
        out.stdout
            .split(|b| *b == 0)
            .filter(|entry| !entry.is_empty())
            .map(|entry| {
                let text = String::from_utf8_lossy(entry);
                let (key, value) = text.split_once('\n').unwrap_or((&text, ""));
                (key.to_owned(), value.to_owned())
            })
            .collect(),
    )
}

/// Of [`program_keys`], those no configuration can switch off: `diff.external` and a driver's
/// `diff.<d>.command` (an external diff program). A command that would run git's diff with one
/// of these is asked, not admitted.
pub fn unswitchable(keys: &[(String, String)]) -> Vec<&(String, String)> {
    keys.iter()
        .filter(|(k, _)| {
            let k = k.to_ascii_lowercase();
            k == "diff.external" || (k.starts_with("diff.") && k.ends_with(".command"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_env_names_each_key_once_and_counts_them() {
        let env = unasked_env(&["diff.ev.textconv".into(), "filter.lfs.process".into()]);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        let count: usize = get("GIT_CONFIG_COUNT").unwrap().parse().unwrap();
        assert_eq!(count, FIXED.len() + 3);
        let pairs: Vec<(&str, &str)> = (0..count)
            .map(|i| {
                (
                    get(&format!("GIT_CONFIG_KEY_{i}")).unwrap(),
                    get(&format!("GIT_CONFIG_VALUE_{i}")).unwrap(),
                )
            })
            .collect();
        assert!(pairs.contains(&("core.fsmonitor", "false")));
        assert!(pairs.contains(&("diff.ev.textconv", "cat")));
        assert!(pairs.contains(&("filter.lfs.process", "")));
        assert!(pairs.contains(&("filter.lfs.required", "false")));
        assert!(dropped("GIT_EXTERNAL_DIFF") && dropped("GIT_CONFIG_KEY_3"));
        assert!(!dropped("PATH") && !dropped("HOME"));
    }
}

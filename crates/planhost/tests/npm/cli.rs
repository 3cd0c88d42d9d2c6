//! `npm install -g` of the launcher tarball in a clean HOME, and what the two commands it puts on
//! PATH do, down to a machine whose platform package is gone.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use planhost_test_support::host::lock_held;
use planhost_test_support::{BOUND, poll_until};

use crate::clean::{Clean, has_symbols, packages, text};

/// The binaries' size bound on linux-x64 (issue 29).
const SIZE_BOUND: u64 = 25 * 1024 * 1024;

/// A clean HOME with the launcher tarball installed globally.
fn installed() -> (tempfile::TempDir, Clean) {
    let root = tempfile::Builder::new().prefix("phnpm").tempdir().unwrap();
    let clean = Clean::at(&root.path().join("home"));
    assert!(
        clean
            .run("sh", &["-c", "command -v cargo"])
            .stdout
            .is_empty(),
        "cargo must not be on the clean PATH"
    );
    let tarball = packages().tarball("planhost");
    clean.ok("npm", &["install", "-g", &tarball.to_string_lossy()]);
    (root, clean)
}

/// Where the launcher finds the binary (asked through the launcher package itself).
fn packaged_binary(clean: &Clean, name: &str) -> PathBuf {
    let lib = clean
        .prefix()
        .join("lib/node_modules/planhost/lib/binary.js");
    let out = clean.ok(
        "node",
        &[
            "-e",
            &format!(
                "console.log(require({:?}).binaryPath({name:?}))",
                lib.display().to_string()
            ),
        ],
    );
    PathBuf::from(out.trim())
}

#[test]
fn the_launcher_installs_globally_runs_the_binary_and_says_what_to_do_without_it() {
    let (_root, clean) = installed();
    let version = &packages().version;
    let platform = packages().platform().name.clone();
    assert!(
        clean
            .registry
            .asked()
            .iter()
            .any(|p| p == &format!("/{platform}")),
        "npm resolved the optional platform package from the registry: {:?}",
        clean.registry.asked()
    );
    let which = clean.ok(
        "sh",
        &["-c", "command -v planhost; command -v planhost-hook"],
    );
    let bin = clean.prefix().join("bin");
    assert_eq!(
        which,
        format!(
            "{}/planhost\n{}/planhost-hook\n",
            bin.display(),
            bin.display()
        ),
        "both commands on PATH from the global prefix"
    );

    assert_eq!(
        clean.ok("planhost", &["--version"]),
        format!("planhost {version}\n")
    );
    let demo = clean.ok("planhost", &["demo"]);
    assert!(
        demo.contains("Write → Deny POLICY_PLAN_WRITE_DENIED") && demo.contains("hello, world"),
        "{demo}"
    );

    // Exit statuses come through: 2 (usage) from the hook, 4 (no host) from the CLI.
    let usage = clean.run("planhost-hook", &[]);
    assert_eq!(usage.status.code(), Some(2), "{}", text(&usage));
    assert!(String::from_utf8_lossy(&usage.stderr).contains("usage: planhost-hook"));
    let state = clean.home().join("state");
    let unreachable = clean.run(
        "planhost",
        &[
            "plans",
            "--state-dir",
            &state.to_string_lossy(),
            "--socket",
            &state.join("none.sock").to_string_lossy(),
        ],
    );
    assert_eq!(unreachable.status.code(), Some(4), "{}", text(&unreachable));

    // The hook on PATH starts the binary without node (a shell script finds it): a `node`
    // first on PATH that would leave a mark is never run.
    let fake = clean.home().join("fake-node");
    fs_err::create_dir_all(&fake).unwrap();
    let mark = clean.home().join("node-ran");
    fs_err::write(
        fake.join("node"),
        format!("#!/bin/sh\ntouch '{}'\nexit 99\n", mark.display()),
    )
    .unwrap();
    fs_err::set_permissions(
        fake.join("node"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let hook = clean.run(
        "sh",
        &[
            "-c",
            &format!("PATH='{}':\"$PATH\" planhost-hook", fake.display()),
        ],
    );
    assert_eq!(hook.status.code(), Some(2), "{}", text(&hook));
    assert!(String::from_utf8_lossy(&hook.stderr).contains("usage: planhost-hook"));
    assert!(!mark.exists(), "planhost-hook went through node");

    // Exactly the stripped binaries, small enough to ship.
    let binary = packaged_binary(&clean, "planhost");
    let dir = binary.parent().unwrap();
    let mut names: Vec<String> = fs_err::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["planhost", "planhost-hook"], "{}", dir.display());
    for name in &names {
        let path = dir.join(name);
        let size = fs_err::metadata(&path).unwrap().len();
        println!("{name}: {size} bytes");
        assert!(size <= SIZE_BOUND, "{} is {size} bytes", path.display());
        assert!(!has_symbols(&path), "{} is not stripped", path.display());
    }

    // The platform package gone (a machine npm found no package for): a message, no crash.
    let package_dir = dir.parent().unwrap();
    assert!(
        package_dir.ends_with(&platform),
        "{}",
        package_dir.display()
    );
    fs_err::remove_dir_all(package_dir).unwrap();
    for (command, status) in [("planhost", 1), ("planhost-hook", 2)] {
        let out = clean.run(command, &["--version"]);
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(status), "{command}: {}", text(&out));
        let key = platform.trim_start_matches("@planhost/");
        for needle in [
            &format!("for this machine ({key}) is missing"),
            &format!("{platform}@{version} is not installed"),
            &format!("npm install -g planhost@{version}"),
            &format!("cargo install --locked planhost@{version}"),
        ] {
            assert!(
                said.contains(needle.as_str()),
                "{command} says {needle:?}: {said}"
            );
        }
        assert!(
            !said.contains("    at ") && !said.contains("node:internal"),
            "no stack trace: {said}"
        );
        assert!(out.stdout.is_empty(), "{}", text(&out));
    }
}

#[test]
fn signals_reach_the_binary_through_the_launcher() {
    let (_root, clean) = installed();
    let state = clean.home().join("state");
    let socket = state.join("planhost.sock");
    let mut serve = clean
        .command("planhost")
        .args(["serve", "--state-dir"])
        .arg(&state)
        .arg("--socket")
        .arg(&socket)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lock = state.join("planhost.lock");
    poll_until("the host serves its socket", BOUND, || {
        std::os::unix::net::UnixStream::connect(&socket).ok()
    });
    assert!(lock_held(&lock));
    let launcher = rustix::process::Pid::from_raw(i32::try_from(serve.id()).unwrap()).unwrap();
    rustix::process::kill_process(launcher, rustix::process::Signal::TERM).unwrap();
    let status = serve.wait().unwrap();
    // The host takes SIGTERM as `planhost stop` and exits 0; the launcher ends the same way
    // (had the signal stopped at the launcher, node would end 143 and the host keep its lock).
    assert!(status.success(), "launcher ended with {status}");
    poll_until(
        "the host released its lock after SIGTERM",
        Duration::from_secs(10),
        || (!lock_held(&lock)).then_some(()),
    );
}

use super::*;
use pretty_assertions::assert_eq;

fn windows_all() -> ProbeResults {
    ProbeResults::none()
        .with(
            ShellId::WindowsPowershell,
            r"C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe",
        )
        .with(ShellId::Cmd, r"C:\Windows\System32\cmd.exe")
        .with(ShellId::GitBash, r"C:\Program Files\Git\bin\bash.exe")
}

fn ids(options: &[ShellOption]) -> Vec<&'static str> {
    options.iter().map(|o| o.id.as_str()).collect()
}

#[test]
fn wire_ids_round_trip() {
    for &id in ShellId::ALL {
        assert_eq!(id.as_str().parse::<ShellId>().unwrap(), id);
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, format!("\"{}\"", id.as_str()));
        assert_eq!(serde_json::from_str::<ShellId>(&json).unwrap(), id);
    }
    assert_eq!(
        crate::parse_shell_id("Bash").unwrap_err().code().as_str(),
        "COMMAND_SHELL_INVALID"
    );
}

#[test]
fn windows_catalog_has_exactly_three_ids_in_order() {
    let options = catalog(Platform::Windows, &windows_all());
    assert_eq!(ids(&options), ["windows-powershell", "cmd", "git-bash"]);
    let dialects: Vec<Dialect> = options.iter().map(|o| o.dialect).collect();
    assert_eq!(
        dialects,
        [Dialect::Powershell, Dialect::Cmd, Dialect::Posix]
    );
    assert!(options.iter().all(|o| o.available));
    let defaults: Vec<bool> = options.iter().map(|o| o.is_default).collect();
    assert_eq!(defaults, [true, false, false]);
}

#[test]
fn unix_catalogs_offer_only_bash() {
    let probes = ProbeResults::none().with(ShellId::Bash, "/bin/bash");
    for platform in [Platform::Linux, Platform::MacOs] {
        let options = catalog(platform, &probes);
        assert_eq!(ids(&options), ["bash"]);
        assert_eq!(options[0].dialect, Dialect::Posix);
        assert!(options[0].available && options[0].is_default);
    }
}

#[test]
fn default_marker_moves_to_first_available_and_vanishes_when_none() {
    let probes = ProbeResults::none().with(ShellId::GitBash, r"C:\Git\bin\bash.exe");
    let options = catalog(Platform::Windows, &probes);
    let view: Vec<(bool, bool)> = options
        .iter()
        .map(|o| (o.available, o.is_default))
        .collect();
    assert_eq!(view, [(false, false), (false, false), (true, true)]);

    let none = catalog(Platform::Linux, &ProbeResults::none());
    assert_eq!(ids(&none), ["bash"]);
    assert!(!none[0].available && !none[0].is_default);
}

#[test]
fn option_serializes_camel_case() {
    let options = catalog(
        Platform::Linux,
        &ProbeResults::none().with(ShellId::Bash, "/bin/bash"),
    );
    let json = serde_json::to_value(&options[0]).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "id": "bash", "label": "Bash", "dialect": "posix", "available": true, "isDefault": true
        })
    );
}

#[test]
fn settings_reject_unknown_wrong_platform_and_unavailable() {
    let win = windows_all();
    let linux = ProbeResults::none().with(ShellId::Bash, "/bin/bash");
    let cases = [
        (Platform::Linux, &linux, "zsh", ShellInvalidReason::Unknown),
        (Platform::Linux, &linux, "", ShellInvalidReason::Unknown),
        (
            Platform::Linux,
            &linux,
            "cmd",
            ShellInvalidReason::WrongPlatform,
        ),
        (
            Platform::MacOs,
            &linux,
            "windows-powershell",
            ShellInvalidReason::WrongPlatform,
        ),
        (
            Platform::Windows,
            &win,
            "bash",
            ShellInvalidReason::WrongPlatform,
        ),
        (
            Platform::Linux,
            &ProbeResults::none(),
            "bash",
            ShellInvalidReason::Unavailable,
        ),
        (
            Platform::Windows,
            &ProbeResults::none().with(ShellId::Cmd, "cmd.exe"),
            "git-bash",
            ShellInvalidReason::Unavailable,
        ),
    ];
    for (platform, probes, id, want) in cases {
        match validate_shell_setting(platform, probes, id) {
            Err(err @ ExecError::ShellInvalid { reason, .. }) => {
                assert_eq!(reason, want, "{platform:?} {id}");
                assert_eq!(err.code().as_str(), "COMMAND_SHELL_INVALID");
            }
            other => panic!("{platform:?} {id}: {other:?}"),
        }
    }
    assert_eq!(
        validate_shell_setting(Platform::Windows, &win, "cmd").unwrap(),
        ShellId::Cmd
    );
    assert_eq!(
        validate_shell_setting(Platform::Linux, &linux, "bash").unwrap(),
        ShellId::Bash
    );
}

#[test]
fn persisted_available_id_is_used_without_fallback() {
    let eff = effective_shell(Platform::Windows, &windows_all(), Some(ShellId::GitBash)).unwrap();
    assert_eq!(eff.id, ShellId::GitBash);
    assert_eq!(eff.dialect, Dialect::Posix);
    assert!(!eff.fallback);
    assert_eq!(
        eff.executable,
        PathBuf::from(r"C:\Program Files\Git\bin\bash.exe")
    );
}

#[test]
fn persisted_unavailable_id_falls_back_to_first_available() {
    let probes = ProbeResults::none()
        .with(ShellId::Cmd, "cmd.exe")
        .with(ShellId::GitBash, "bash.exe");
    let eff =
        effective_shell(Platform::Windows, &probes, Some(ShellId::WindowsPowershell)).unwrap();
    assert_eq!(
        (eff.id, eff.dialect, eff.fallback),
        (ShellId::Cmd, Dialect::Cmd, true)
    );

    // A persisted id from another platform (a synced settings file) also falls back.
    let linux = ProbeResults::none().with(ShellId::Bash, "/bin/bash");
    let eff = effective_shell(Platform::Linux, &linux, Some(ShellId::Cmd)).unwrap();
    assert_eq!((eff.id, eff.fallback), (ShellId::Bash, true));

    // No persisted id: the default, not a fallback.
    let eff = effective_shell(Platform::Windows, &probes, None).unwrap();
    assert_eq!((eff.id, eff.fallback), (ShellId::Cmd, false));
}

#[test]
fn no_shell_is_shell_not_found() {
    for (platform, persisted) in [
        (Platform::Linux, None),
        (Platform::Windows, Some(ShellId::Cmd)),
        (Platform::MacOs, None),
    ] {
        let err = effective_shell(platform, &ProbeResults::none(), persisted).unwrap_err();
        assert_eq!(err.code().as_str(), "SHELL_NOT_FOUND");
    }
    // Only a wrong-platform shell exists: still nothing for this platform.
    let probes = ProbeResults::none().with(ShellId::Bash, "/bin/bash");
    let err = effective_shell(Platform::Windows, &probes, None).unwrap_err();
    assert_eq!(err.code().as_str(), "SHELL_NOT_FOUND");
}

#[test]
fn pin_holds_and_any_change_is_shell_changed() {
    let probes = windows_all();
    let launch = effective_shell(Platform::Windows, &probes, Some(ShellId::Cmd)).unwrap();
    let pin = PinnedShell::pin(&launch);
    assert_eq!(
        pin,
        PinnedShell {
            id: ShellId::Cmd,
            dialect: Dialect::Cmd
        }
    );

    // Unchanged catalog, matching request: accepted.
    let again = resolve_pinned(
        Platform::Windows,
        &probes,
        Some(ShellId::Cmd),
        &pin,
        ShellId::Cmd,
    )
    .unwrap();
    assert_eq!(again.id, ShellId::Cmd);

    // The request carries a stale expected id.
    let err = verify_pin(&pin, ShellId::GitBash, &launch).unwrap_err();
    assert_eq!(err.code().as_str(), "COMMAND_SHELL_CHANGED");

    // Settings changed after the pin: the turn keeps failing closed, never switches.
    let err = resolve_pinned(
        Platform::Windows,
        &probes,
        Some(ShellId::GitBash),
        &pin,
        ShellId::Cmd,
    )
    .unwrap_err();
    assert_eq!(err.code().as_str(), "COMMAND_SHELL_CHANGED");

    // cmd disappeared, so the catalog now falls back to PowerShell: still a change.
    let without_cmd = ProbeResults::none()
        .with(ShellId::WindowsPowershell, "powershell.exe")
        .with(ShellId::GitBash, "bash.exe");
    let err = resolve_pinned(
        Platform::Windows,
        &without_cmd,
        Some(ShellId::Cmd),
        &pin,
        ShellId::Cmd,
    )
    .unwrap_err();
    assert!(matches!(
        err,
        ExecError::ShellChanged {
            pinned: ShellId::Cmd,
            current: ShellId::WindowsPowershell,
            ..
        }
    ));

    // Same id but a different dialect (not producible by the catalog, but checked anyway).
    let odd = EffectiveShell {
        dialect: Dialect::Posix,
        ..launch
    };
    assert_eq!(
        verify_pin(&pin, ShellId::Cmd, &odd)
            .unwrap_err()
            .code()
            .as_str(),
        "COMMAND_SHELL_CHANGED"
    );
}

#[test]
fn pin_survives_a_fallback_chosen_before_launch() {
    // A fallback may pick the shell before the pin; afterwards the same resolution is accepted.
    let probes = ProbeResults::none().with(ShellId::Cmd, "cmd.exe");
    let launch =
        effective_shell(Platform::Windows, &probes, Some(ShellId::WindowsPowershell)).unwrap();
    assert!(launch.fallback);
    let pin = PinnedShell::pin(&launch);
    resolve_pinned(
        Platform::Windows,
        &probes,
        Some(ShellId::WindowsPowershell),
        &pin,
        ShellId::Cmd,
    )
    .unwrap();
}

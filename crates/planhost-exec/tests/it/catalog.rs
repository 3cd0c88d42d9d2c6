use planhost_exec::{Platform, ShellId, catalog, effective_shell, probe, probe_with_path};

#[test]
fn probe_finds_bash_on_this_linux_machine() {
    let probes = probe();
    let exe = probes.executable(ShellId::Bash).expect("bash");
    assert!(
        exe.is_absolute() && exe.ends_with("bash"),
        "{}",
        exe.display()
    );
    let options = catalog(Platform::current(), &probes);
    assert_eq!(options.len(), 1);
    assert!(options[0].available && options[0].is_default);
}

#[test]
fn probe_falls_back_to_fixed_paths_without_path() {
    // An empty PATH still finds /bin/bash or /usr/bin/bash on any Linux with bash.
    let probes = probe_with_path(None);
    assert!(probes.executable(ShellId::Bash).is_some());
    assert!(probes.executable(ShellId::Cmd).is_none());
    let eff = effective_shell(Platform::Linux, &probes, Some(ShellId::Bash)).unwrap();
    assert!(!eff.fallback);
}

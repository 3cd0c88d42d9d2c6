//! Tests that need something of the machine (root, a writable cgroup v2 tree, mounting a tmpfs)
//! say so when they skip, and cannot skip where the machine was declared to offer it: CI checks
//! the machine itself and names what it offers in `PLANHOST_EXPECT_CAPABILITIES`, so a detection
//! that goes wrong fails the run instead of passing a test that checked nothing.

/// What a test may need of the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    /// Running as root (moving a process between cgroups, mounting).
    Root,
    /// A cgroup v2 tree this process sits in and may create children in.
    CgroupV2,
    /// Mounting a size-limited tmpfs (root in the initial mount namespace).
    Tmpfs,
}

impl Capability {
    /// The name `PLANHOST_EXPECT_CAPABILITIES` uses.
    pub fn name(self) -> &'static str {
        match self {
            Capability::Root => "root",
            Capability::CgroupV2 => "cgroup2",
            Capability::Tmpfs => "tmpfs",
        }
    }
}

/// The variable CI sets to the capabilities its machine offers, comma-separated.
pub const EXPECT_VAR: &str = "PLANHOST_EXPECT_CAPABILITIES";

/// Whether the capability the test `test` needs is there (`found`). When it is not, the skip is
/// said on stderr with `why`, unless [`EXPECT_VAR`] names it: then the machine was expected to
/// offer it and the test fails.
#[allow(clippy::print_stderr, reason = "a skipped test says so")]
pub fn present(capability: Capability, found: bool, test: &str, why: &str) -> bool {
    let expected = std::env::var(EXPECT_VAR).unwrap_or_default();
    present_given(&expected, capability, found, test, why)
}

/// [`present`] with the declared capabilities given.
fn present_given(
    expected: &str,
    capability: Capability,
    found: bool,
    test: &str,
    why: &str,
) -> bool {
    if found {
        return true;
    }
    assert!(
        !expected.split(',').any(|c| c.trim() == capability.name()),
        "{test}: this machine was declared to offer {} ({EXPECT_VAR}={expected}), yet {why}",
        capability.name()
    );
    eprintln!("skipped: {test}: needs {}: {why}", capability.name());
    false
}

/// [`Capability::Root`], checked.
pub fn root(test: &str) -> bool {
    present(
        Capability::Root,
        rustix::process::geteuid().is_root(),
        test,
        "this process is not root",
    )
}

/// [`Capability::CgroupV2`], checked: the cgroup v2 directory this process sits in, when it is
/// there and writable.
pub fn cgroup2(test: &str) -> Option<std::path::PathBuf> {
    let base = crate::procs::cgroup_base()
        .filter(|b| rustix::fs::access(b.as_path(), rustix::fs::Access::WRITE_OK).is_ok());
    present(
        Capability::CgroupV2,
        base.is_some(),
        test,
        "no writable cgroup v2 directory holds this process",
    )
    .then_some(base)
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_capability_is_a_skip_unless_the_machine_was_declared_to_offer_it() {
        assert!(present_given("", Capability::Root, true, "t", "-"));
        assert!(!present_given("", Capability::Root, false, "t", "not root"));
        assert!(!present_given(
            "tmpfs",
            Capability::Root,
            false,
            "t",
            "not root"
        ));
        let declared = std::panic::catch_unwind(|| {
            present_given("cgroup2, root", Capability::Root, false, "t", "not root")
        });
        assert!(declared.is_err(), "declared but missing must fail the test");
    }
}

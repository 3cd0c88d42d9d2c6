//! The packages (made once per run) and a clean HOME to install them in: npm's prefix and cache
//! inside it, the local registry in its `.npmrc`, and a PATH of node's directory and the
//! system's, checked to hold no cargo and no planhost.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use planhost_test_support::NpmRegistry;
use planhost_test_support::npm_registry::{Packed, read_packed};

/// The packages `scripts/npm-pack` wrote.
#[derive(Debug)]
pub(crate) struct Packages {
    pub(crate) dir: PathBuf,
    pub(crate) version: String,
    pub(crate) packed: Vec<Packed>,
}

impl Packages {
    /// The tarball of `name`.
    pub(crate) fn tarball(&self, name: &str) -> PathBuf {
        self.packed
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("no {name} among the packages in {}", self.dir.display()))
            .file
            .clone()
    }

    /// This machine's platform package (`@planhost/linux-x64`).
    pub(crate) fn platform(&self) -> &Packed {
        self.packed
            .iter()
            .find(|p| p.name.starts_with("@planhost/"))
            .expect("a platform package")
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `PLANHOST_NPM_PACKAGES`, else `scripts/npm-pack <target>/npm-packages` (once per run).
pub(crate) fn packages() -> &'static Packages {
    static PACKAGES: OnceLock<Packages> = OnceLock::new();
    PACKAGES.get_or_init(|| {
        let dir = match std::env::var_os("PLANHOST_NPM_PACKAGES").filter(|d| !d.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => {
                let dir = planhost_test_support::pi_install::target_dir().join("npm-packages");
                let out = Command::new("node")
                    .arg(repo().join("scripts/npm-pack"))
                    .arg(&dir)
                    .current_dir(repo())
                    .stdin(Stdio::null())
                    .output()
                    .expect("run scripts/npm-pack");
                assert!(
                    out.status.success(),
                    "scripts/npm-pack failed: {}",
                    text(&out)
                );
                dir
            }
        };
        let packed = read_packed(&dir).unwrap_or_else(|e| panic!("{e}"));
        let version = packed
            .iter()
            .find(|p| p.name == "planhost")
            .map(|p| p.version.clone())
            .expect("the launcher among the packages");
        for name in ["planhost", "pi-planhost"] {
            assert!(
                packed
                    .iter()
                    .any(|p| p.name == name && p.version == version),
                "{name}@{version} among {packed:?}"
            );
        }
        Packages {
            dir,
            version,
            packed,
        }
    })
}

/// A HOME with nothing of this machine's user in it, and the registry npm there uses.
#[derive(Debug)]
pub(crate) struct Clean {
    home: PathBuf,
    pub(crate) registry: NpmRegistry,
}

impl Clean {
    /// Makes `home` a clean HOME (it may already hold a test's files) with its own registry.
    pub(crate) fn at(home: &Path) -> Self {
        fs_err::create_dir_all(home).unwrap();
        let registry = NpmRegistry::serve(&packages().dir).unwrap_or_else(|e| panic!("{e}"));
        fs_err::write(
            home.join(".npmrc"),
            format!(
                "registry={}\nprefix={}\ncache={}\nfund=false\naudit=false\nupdate-notifier=false\n",
                registry.url(),
                home.join(".npm-global").display(),
                home.join(".npm").display()
            ),
        )
        .unwrap();
        Self {
            home: home.to_owned(),
            registry,
        }
    }

    pub(crate) fn home(&self) -> &Path {
        &self.home
    }

    /// `npm install -g`'s prefix (its `bin/` is first on [`Clean::path`]).
    pub(crate) fn prefix(&self) -> PathBuf {
        self.home.join(".npm-global")
    }

    /// npm's cache (npx keeps what it runs in `_npx/` there).
    pub(crate) fn cache(&self) -> PathBuf {
        self.home.join(".npm")
    }

    /// The global prefix's `bin/`, node's directory and the system's; none holds cargo or
    /// planhost (checked).
    pub(crate) fn path(&self) -> String {
        let node = which("node").expect("node on PATH");
        let dirs = [
            self.prefix().join("bin"),
            node.parent().unwrap().to_owned(),
            PathBuf::from("/usr/bin"),
            PathBuf::from("/bin"),
        ];
        for dir in &dirs[1..] {
            for program in ["cargo", "planhost", "planhost-hook"] {
                assert!(
                    !dir.join(program).exists(),
                    "{} holds {program}: the clean PATH would not be clean",
                    dir.display()
                );
            }
        }
        std::env::join_paths(&dirs)
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    /// `program` with nothing but this HOME, [`Clean::path`] and a locale in its environment.
    pub(crate) fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("HOME", &self.home)
            .env("PATH", self.path())
            .env("LANG", "C.UTF-8")
            .current_dir(&self.home)
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `program args…` to completion.
    pub(crate) fn run(&self, program: &str, args: &[&str]) -> Output {
        self.command(program)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{program}: {e}"))
    }

    /// Runs it and insists on success; returns stdout.
    pub(crate) fn ok(&self, program: &str, args: &[&str]) -> String {
        let out = self.run(program, args);
        assert!(out.status.success(), "{program} {args:?}: {}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// Where `program` is on this process's PATH.
pub(crate) fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

pub(crate) fn text(out: &Output) -> String {
    format!(
        "{}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Whether the ELF file's section names include `.symtab` or `.debug_info`: an unstripped
/// binary's do, a stripped one keeps only what it needs to run (`.dynsym`).
pub(crate) fn has_symbols(binary: &Path) -> bool {
    let bytes = fs_err::read(binary).unwrap();
    [&b".symtab\0"[..], &b".debug_info\0"[..]]
        .iter()
        .any(|name| bytes.windows(name.len()).any(|w| w == *name))
}

//! The workspace path validator (`Workspace::resolve`, `resolve_for_write`, `Name::new`) against
//! a real directory tree with symlinks inside, outside, dangling and looping.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use planhost_fs::{Name, Workspace};

/// The codes a refused path may carry; anything else is a finding.
pub const REFUSALS: &[&str] = &[
    "FS_PATH_INVALID",
    "FS_OUTSIDE_WORKSPACE",
    "FS_SYMLINK_ESCAPE",
    "FS_SYMLINK",
    "FS_NOT_DIRECTORY",
    "FS_IO",
];

/// The tree every input is resolved in (made once per process).
#[derive(Debug)]
pub struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    alias: PathBuf,
    outside: PathBuf,
    ws: Workspace,
    /// The same root opened through a symlink to it.
    ws_alias: Workspace,
}

/// Names in the tree: plain files and directories, and symlinks of every kind.
pub const NAMES: &[&str] = &[
    "src", "lib.rs", "deep", "missing", ".pi", "plan", "in", "rel_in", "out", "out_file", "up",
    "dangling", "loop", "file_dir",
];

fn tree() -> Fixture {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let base = std::fs::canonicalize(tmp.path()).unwrap_or_else(|e| panic!("{e}"));
    let root = base.join("ws");
    let outside = base.join("outside");
    let alias = base.join("alias");
    let mk = |p: PathBuf| fs_err::create_dir_all(p).unwrap_or_else(|e| panic!("{e}"));
    let file = |p: PathBuf| fs_err::write(p, b"x").unwrap_or_else(|e| panic!("{e}"));
    let link = |target: &Path, at: PathBuf| {
        fs_err::os::unix::fs::symlink(target, at).unwrap_or_else(|e| panic!("{e}"));
    };
    mk(root.join("src/deep"));
    mk(root.join(".pi/plan"));
    mk(outside.join("deep"));
    file(root.join("src/lib.rs"));
    file(root.join("file_dir"));
    file(outside.join("secret"));
    link(&root.join("src"), root.join("in"));
    link(Path::new("src"), root.join("rel_in"));
    link(&outside, root.join("out"));
    link(&outside.join("secret"), root.join("out_file"));
    link(Path::new(".."), root.join("up"));
    link(&root.join("nothing-here"), root.join("dangling"));
    link(Path::new("loop"), root.join("loop"));
    link(&root, alias.clone());
    let ws = Workspace::new(&root).unwrap_or_else(|e| panic!("{e}"));
    let ws_alias = Workspace::new(&alias).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ws.root(), root);
    assert_eq!(ws_alias.root(), root);
    Fixture {
        _tmp: tmp,
        root,
        alias,
        outside,
        ws,
        ws_alias,
    }
}

/// The process's fixture.
pub fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(tree)
}

/// A path shaped by the fuzzer out of the tree's names and the hard cases.
#[derive(Debug, Arbitrary)]
pub struct Request {
    start: Start,
    pieces: Vec<Piece>,
}

#[derive(Debug, Arbitrary)]
enum Start {
    Relative,
    Root,
    Alias,
    Outside,
    Slash,
    Raw(String),
}

#[derive(Debug, Arbitrary)]
enum Piece {
    Name(u8),
    Dot,
    DotDot,
    Slash,
    Nul,
    Raw(String),
}

impl Request {
    /// The path text.
    pub fn text(&self, fx: &Fixture) -> String {
        let mut out = match &self.start {
            Start::Relative => String::new(),
            Start::Root => format!("{}/", fx.root.display()),
            Start::Alias => format!("{}/", fx.alias.display()),
            Start::Outside => format!("{}/", fx.outside.display()),
            Start::Slash => "/".into(),
            Start::Raw(s) => s.clone(),
        };
        for (i, p) in self.pieces.iter().enumerate() {
            if i > 0 && !out.is_empty() && !out.ends_with('/') {
                out.push('/');
            }
            match p {
                Piece::Name(n) => out.push_str(NAMES[usize::from(*n) % NAMES.len()]),
                Piece::Dot => out.push('.'),
                Piece::DotDot => out.push_str(".."),
                Piece::Slash => out.push('/'),
                Piece::Nul => out.push('\0'),
                Piece::Raw(s) => out.push_str(s),
            }
        }
        out
    }
}

/// Lexical normalisation written independently of the resolver: split on `/`, drop empty and
/// `.` components, let `..` pop (never above `/`).
fn lexical(base: &Path, requested: &str) -> Vec<String> {
    let mut parts: Vec<String> = if requested.starts_with('/') {
        Vec::new()
    } else {
        base.to_str()
            .unwrap_or_else(|| panic!("non-UTF-8 root"))
            .split('/')
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect()
    };
    for c in requested.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            name => parts.push(name.to_owned()),
        }
    }
    parts
}

fn under(parts: &[String], prefix: &Path) -> bool {
    let prefix: Vec<&str> = prefix
        .to_str()
        .unwrap_or_else(|| panic!("non-UTF-8 root"))
        .split('/')
        .filter(|c| !c.is_empty())
        .collect();
    parts.len() >= prefix.len() && parts.iter().zip(&prefix).all(|(a, b)| a == b)
}

/// The deepest existing ancestor of `path` (itself included), seen without following it.
fn existing_prefix(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    while std::fs::symlink_metadata(&p).is_err() {
        if !p.pop() {
            break;
        }
    }
    p
}

/// The real path of an open file, from `/proc/self/fd`.
fn opened_path(file: &std::fs::File) -> PathBuf {
    use std::os::fd::AsRawFd as _;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Every invariant of one requested path, in both workspaces.
pub fn check(fx: &Fixture, requested: &str) {
    check_in(fx, &fx.ws, requested, &[&fx.root]);
    check_in(fx, &fx.ws_alias, requested, &[&fx.root, &fx.alias]);
    // Relative requests do not care how the root was named.
    if !requested.starts_with('/') {
        let a = fx.ws.resolve(requested).map_err(|e| e.code());
        let b = fx.ws_alias.resolve(requested).map_err(|e| e.code());
        assert_eq!(a, b, "{requested:?}: the alias changed a relative answer");
    }
    // The component validator the handle walks use.
    match Name::new(requested) {
        Ok(name) => {
            assert_eq!(name.as_str(), requested);
            assert!(!requested.is_empty() && requested != "." && requested != "..");
            assert!(!requested.contains(['/', '\0']));
        }
        Err(e) => assert_eq!(e.code().as_str(), "FS_INVALID_NAME"),
    }
}

fn check_in(fx: &Fixture, ws: &Workspace, requested: &str, prefixes: &[&Path]) {
    let bad_text = requested.is_empty() || requested.contains('\0');
    let inside = !bad_text && {
        let parts = lexical(&fx.root, requested);
        prefixes.iter().any(|p| under(&parts, p))
    };
    let resolved = ws.resolve(requested);
    match &resolved {
        Ok(p) => {
            assert!(
                inside,
                "{requested:?} accepted, but it is lexically outside: {p:?}"
            );
            let abs = p.absolute();
            assert!(
                abs.starts_with(&fx.root),
                "{requested:?} resolved outside: {p:?}"
            );
            assert_eq!(
                ws.relative_of(abs)
                    .unwrap_or_else(|e| panic!("{e}"))
                    .as_deref(),
                Some(p.relative())
            );
            assert!(
                p.relative().is_empty() || p.relative().split('/').all(|c| Name::new(c).is_ok()),
                "{requested:?}: relative {:?} has a bad component",
                p.relative()
            );
            assert!(p.names().is_ok());
            // What exists of it is really there: the real path of the existing part is itself.
            // (Found by this target: `missing/../out/secret` once resolved "inside".)
            let existing = existing_prefix(abs);
            let real = std::fs::canonicalize(&existing).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(real, existing, "{requested:?}: {p:?} is not canonical");
            assert!(
                real.starts_with(&fx.root),
                "{requested:?}: really at {real:?}"
            );
            // Whatever the resolver said, the handle walk never opens a file outside.
            if let Ok(file) = ws.open_file(p) {
                let real = opened_path(&file);
                assert!(real.starts_with(&fx.root), "{requested:?}: opened {real:?}");
            }
        }
        Err(e) => {
            let code = e.code().as_str();
            assert!(
                REFUSALS.contains(&code),
                "{requested:?}: unexpected {code}: {e}"
            );
            if bad_text {
                assert_eq!(code, "FS_PATH_INVALID", "{requested:?}");
            } else if !inside {
                assert_eq!(code, "FS_OUTSIDE_WORKSPACE", "{requested:?}");
            }
        }
    }
    match ws.resolve_for_write(requested) {
        Ok(w) => {
            let r = resolved.as_ref().unwrap_or_else(|e| {
                panic!("{requested:?}: a write target that does not resolve: {e}")
            });
            assert_eq!(&w, r);
            // No symlink anywhere on a write target's existing part.
            let mut p = existing_prefix(w.absolute());
            while p.starts_with(&fx.root) && p != fx.root {
                let meta = std::fs::symlink_metadata(&p).unwrap_or_else(|e| panic!("{e}"));
                assert!(
                    !meta.file_type().is_symlink(),
                    "{requested:?}: writes through {p:?}"
                );
                p.pop();
            }
        }
        Err(e) => {
            let code = e.code().as_str();
            assert!(
                REFUSALS.contains(&code),
                "{requested:?}: unexpected {code}: {e}"
            );
        }
    }
}

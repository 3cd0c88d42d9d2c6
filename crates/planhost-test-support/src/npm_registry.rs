//! A package registry on 127.0.0.1 that serves exactly the npm packages `scripts/npm-pack`
//! wrote, so that the packaging tests install them the way a person installs the published
//! ones (`npm install -g planhost`, `npx planhost`, `pi install npm:pi-planhost`), with npm's
//! own resolution of optional dependencies by `os`, `cpu` and `libc`, and nothing fetched from
//! anywhere else: a name it does not hold is a 404, as on the real registry before a release.
//!
//! It reads `packages.json` from the directory (one entry per tarball: name, version, file,
//! integrity, shasum and the package's manifest) and answers `GET /<name>` with the package
//! document npm reads (`versions`, `dist-tags`, each version's `dist.tarball` pointing back
//! here) and `GET /-/<file>` with the tarball.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};

/// One packed tarball, as `packages.json` lists it.
#[derive(Debug, Clone)]
pub struct Packed {
    /// The package's name (`@planhost/linux-x64`).
    pub name: String,
    /// Its version.
    pub version: String,
    /// The tarball's path.
    pub file: PathBuf,
    /// Its `package.json`.
    pub manifest: Value,
    integrity: String,
    shasum: String,
}

/// Reads `<dir>/packages.json`.
pub fn read_packed(dir: &Path) -> Result<Vec<Packed>, String> {
    let path = dir.join("packages.json");
    let text = fs_err::read_to_string(&path).map_err(|e| e.to_string())?;
    let listed: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let items = listed["packages"]
        .as_array()
        .ok_or_else(|| format!("{} lists no packages", path.display()))?;
    items
        .iter()
        .map(|item| {
            let field = |key: &str| {
                item[key]
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("{}: an entry has no {key}: {item}", path.display()))
            };
            Ok(Packed {
                name: field("name")?,
                version: field("version")?,
                file: dir.join(field("file")?),
                manifest: item["manifest"].clone(),
                integrity: field("integrity")?,
                shasum: field("shasum")?,
            })
        })
        .collect()
}

/// The registry; it serves until the test process ends.
#[derive(Debug)]
pub struct NpmRegistry {
    port: u16,
    asked: Arc<Mutex<Vec<String>>>,
}

impl NpmRegistry {
    /// Serves the packages in `dir` (see the module docs) on an ephemeral port of 127.0.0.1.
    pub fn serve(dir: &Path) -> Result<Self, String> {
        let packed = read_packed(dir)?;
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let asked: Arc<Mutex<Vec<String>>> = Arc::default();
        let shared = (Arc::new(packed), Arc::clone(&asked));
        std::thread::Builder::new()
            .name("npm-registry".into())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    let (packed, asked) = (Arc::clone(&shared.0), Arc::clone(&shared.1));
                    std::thread::spawn(move || {
                        let _ = answer(stream, port, &packed, &asked);
                    });
                }
            })
            .map_err(|e| e.to_string())?;
        Ok(Self { port, asked })
    }

    /// The registry's URL, for `npm_config_registry`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// Every path asked so far, in order.
    pub fn asked(&self) -> Vec<String> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// `@planhost%2flinux-x64` → `@planhost/linux-x64`.
fn decode(path: &str) -> String {
    path.replace("%2f", "/")
        .replace("%2F", "/")
        .replace("%40", "@")
}

fn document(packed: &[Packed], name: &str, port: u16) -> Option<Value> {
    let versions: serde_json::Map<String, Value> = packed
        .iter()
        .filter(|p| p.name == name)
        .map(|p| {
            let mut manifest = p.manifest.clone();
            let file = p.file.file_name().map(|f| f.to_string_lossy().into_owned());
            manifest["dist"] = json!({
                "tarball": format!("http://127.0.0.1:{port}/-/{}", file.unwrap_or_default()),
                "integrity": p.integrity,
                "shasum": p.shasum,
            });
            (p.version.clone(), manifest)
        })
        .collect();
    let latest = versions.keys().next_back()?.clone();
    Some(json!({ "name": name, "dist-tags": { "latest": latest }, "versions": versions }))
}

fn answer(
    stream: TcpStream,
    port: u16,
    packed: &[Packed],
    asked: &Mutex<Vec<String>>,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
    }
    let path = decode(request.split_whitespace().nth(1).unwrap_or("/"));
    asked
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(path.clone());
    let (status, kind, body) = if let Some(file) = path.strip_prefix("/-/") {
        match packed
            .iter()
            .find(|p| p.file.file_name().is_some_and(|f| f == file))
        {
            Some(p) => ("200 OK", "application/octet-stream", fs_err::read(&p.file)?),
            None => ("404 Not Found", "application/json", b"{}".to_vec()),
        }
    } else {
        match document(packed, path.trim_start_matches('/'), port) {
            Some(doc) => ("200 OK", "application/json", doc.to_string().into_bytes()),
            None => (
                "404 Not Found",
                "application/json",
                br#"{"error":"Not found"}"#.to_vec(),
            ),
        }
    };
    let mut out = stream;
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    out.write_all(&body)?;
    out.flush()
}

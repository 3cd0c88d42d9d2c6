//! `planhost serve --stdio` with one client on its stdin and stdout.

use std::io::Read;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};

use planhost_client::Client;
use planhost_protocol::Response;
use serde_json::Value;

use super::conn::{Closable, Conn};
use super::process::{Captured, Home, Reaped};

/// A reader that keeps a copy of every byte it passes on.
struct Tee<R> {
    inner: R,
    copy: Arc<Mutex<Vec<u8>>>,
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.copy
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

/// `planhost serve --stdio` with one client on its stdin/stdout.
#[derive(Debug)]
pub struct StdioHost {
    /// The host.
    pub child: Reaped,
    /// Its stderr.
    pub stderr: Captured,
    stdout: Arc<Mutex<Vec<u8>>>,
}

impl StdioHost {
    /// Starts the host and returns it with its client, initialized with every role.
    pub fn start(home: &Home) -> (Self, Conn) {
        let mut child = home
            .command()
            .args(["serve", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn planhost serve --stdio");
        let stderr = Captured::spawn(child.stderr.take().expect("stderr"));
        let copy = Arc::new(Mutex::new(Vec::new()));
        let reader = Tee {
            inner: child.stdout.take().expect("stdout"),
            copy: Arc::clone(&copy),
        };
        let stdin = Arc::new(Mutex::new(Some(child.stdin.take().expect("stdin"))));
        let client = Client::from_streams(reader, Closable(Arc::clone(&stdin)));
        // Reaped first: a failed handshake must not leave the host behind.
        let host = Self {
            child: Reaped::new(child),
            stderr,
            stdout: copy,
        };
        let mut conn = Conn::stdio(client, stdin);
        conn.initialize("e2e-stdio");
        (host, conn)
    }

    /// Every line the host wrote to stdout so far.
    pub fn stdout_lines(&self) -> Vec<String> {
        let bytes = self
            .stdout
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        String::from_utf8(bytes)
            .expect("stdout is UTF-8")
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Asserts every stdout line is a JSON-RPC 2.0 response or notification.
    pub fn assert_stdout_is_protocol(&self) {
        let lines = self.stdout_lines();
        assert!(!lines.is_empty(), "no protocol on stdout");
        for line in &lines {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("non-JSON line on stdout ({e}): {line:?}"));
            assert_eq!(value["jsonrpc"], "2.0", "{line}");
            let is_response = value.get("id").is_some()
                && (value.get("result").is_some() != value.get("error").is_some());
            let is_notification = value.get("id").is_none()
                && value["method"].is_string()
                && value.get("params").is_some();
            assert!(
                is_response || is_notification,
                "stdout line is neither a response nor a notification: {line}"
            );
            if is_response {
                let _: Response = serde_json::from_value(value).expect("a Response");
            }
        }
    }
}

//! Notifications beyond the browser: a command the person names (`planhost notify COMMAND`,
//! kept in `<state dir>/notify.json`, mode 0600) that the host runs whenever a plan, a
//! permission ask or a publication starts waiting for an answer, with what waits as JSON on
//! its stdin. With it a person wires ntfy, a chat webhook or `notify-send` without planhost
//! knowing any of them.
//!
//! It is a face like the web page: an observer connection in the host's process that reacts to
//! state changes. It never holds the host up: each command runs in a task of its own, in its
//! own process group, killed with its group after its timeout; at most [`MAX_RUNNING`] run at
//! once (more are skipped and logged); failures are logged, never answered to anyone.
//! The file is read when something starts waiting, so a change needs no restart.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use planhost_core::{ApprovalStatus, EventBody, PublicationStatus, Role};
use planhost_protocol::{InitializeParams, PROTOCOL_VERSION, ProposalRef, ServerNotification};
use planhost_service::Service;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt as _;

/// The file that names the command.
pub(crate) const FILE: &str = "notify.json";
/// How long a command may run unless the file says otherwise.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// Commands running at once; a notification beyond them is skipped (and logged).
const MAX_RUNNING: usize = 4;
/// The client name of the host's own notifier connection.
const CLIENT_NAME: &str = "planhost-notify";

/// What `notify.json` holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct NotifyConfig {
    /// Run with `sh -c`.
    pub(crate) command: String,
    /// Killed (with its process group) after this long.
    #[serde(default = "default_timeout")]
    pub(crate) timeout_ms: u64,
}

fn default_timeout() -> u64 {
    DEFAULT_TIMEOUT_MS
}

impl NotifyConfig {
    pub(crate) fn path(state_dir: &Path) -> PathBuf {
        state_dir.join(FILE)
    }

    /// The configured command, if any. A file that does not parse is an error to say, not a
    /// silent "no notifications".
    pub(crate) fn read(state_dir: &Path) -> anyhow::Result<Option<Self>> {
        let path = Self::path(state_dir);
        match fs_err::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
                anyhow::anyhow!(
                    "{} is not a notify setting ({e}); run `planhost notify COMMAND` or `planhost notify --clear`",
                    path.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Writes the file whole or not at all, readable by this user only.
    pub(crate) fn write(&self, state_dir: &Path) -> anyhow::Result<()> {
        crate::web::write_private(
            &Self::path(state_dir),
            serde_json::to_string_pretty(self)?.as_bytes(),
        )
    }
}

/// What starts waiting, as the command's stdin.
fn waiting(body: &EventBody) -> Option<(&'static str, Value)> {
    match body {
        EventBody::ApprovalChanged {
            proposal_id,
            status: ApprovalStatus::Pending,
            expires_at,
            ..
        } => Some((
            "plan",
            json!({ "proposalId": proposal_id, "expiresAt": expires_at }),
        )),
        EventBody::PermissionAsked {
            request_id,
            tool_name,
            reason,
            ..
        } => Some((
            "ask",
            json!({ "requestId": request_id, "toolName": tool_name, "reason": reason }),
        )),
        EventBody::PublicationChanged {
            publication_id,
            status: PublicationStatus::Pending,
        } => Some(("publication", json!({ "publicationId": publication_id }))),
        EventBody::SessionUpdated { .. }
        | EventBody::TurnStarted { .. }
        | EventBody::TurnEnded { .. }
        | EventBody::ApprovalChanged { .. }
        | EventBody::PermissionResolved { .. }
        | EventBody::CheckpointSaved { .. }
        | EventBody::PublicationChanged { .. }
        | EventBody::HandoffChanged { .. }
        | EventBody::ExecutionChanged { .. } => None,
    }
}

/// Watches the host's state changes and runs the command for each that starts waiting.
pub(crate) fn start(svc: Service, state_dir: &Path) -> anyhow::Result<()> {
    let hello = InitializeParams {
        protocol_version: PROTOCOL_VERSION,
        client_name: CLIENT_NAME.into(),
        client_version: Some(env!("CARGO_PKG_VERSION").into()),
        roles: vec![Role::Observer],
        tool_activity: false,
        events: planhost_protocol::EventScope::All,
        agent_process: None,
    };
    let (conn, mut notes, _) = svc.connect(&hello, planhost_service::Peer::Embedded)?;
    let state_dir = state_dir.to_path_buf();
    let running = Arc::new(tokio::sync::Semaphore::new(MAX_RUNNING));
    tokio::spawn(async move {
        while let Some(note) = notes.recv().await {
            let event = match note {
                ServerNotification::StateChanged(event) => event,
                ServerNotification::HostStopping(_) => break,
                ServerNotification::ToolOutput(_) | ServerNotification::ToolActivity(_) => continue,
            };
            let Some((kind, mut what)) = waiting(&event.body) else {
                continue;
            };
            let config = match NotifyConfig::read(&state_dir) {
                Ok(Some(config)) => config,
                Ok(None) => continue,
                Err(error) => {
                    tracing::warn!(%error, "notify: not run");
                    continue;
                }
            };
            // A plan's card says what it is: its title, question and file.
            if kind == "plan"
                && let Some(id) = what["proposalId"].as_str()
                && let Ok(detail) = conn
                    .call::<planhost_protocol::methods::PlansGet>(ProposalRef {
                        proposal_id: id.into(),
                    })
                    .await
            {
                let a = detail.approval;
                what["title"] = json!(a.title);
                what["question"] = json!(a.question);
                what["artifactPath"] = json!(a.artifact_path);
                what["artifactSha256"] = json!(a.artifact_sha256);
            }
            what["kind"] = json!(kind);
            what["sessionId"] = json!(event.session_id);
            what["at"] = json!(event.at);
            if let Some(url) = page_url(&state_dir, kind, &what) {
                what["url"] = json!(url);
            }
            let Ok(permit) = Arc::clone(&running).try_acquire_owned() else {
                tracing::warn!(
                    kind,
                    "notify: {MAX_RUNNING} commands still running; this one is skipped"
                );
                continue;
            };
            tokio::spawn(async move {
                run(&config, kind, &what).await;
                drop(permit);
            });
        }
    });
    Ok(())
}

/// The page's address for what waits (without its token), when the page is served.
fn page_url(state_dir: &Path, kind: &str, what: &Value) -> Option<String> {
    let file = crate::web::WebFile::read(state_dir).ok()?;
    let base = file.url.trim_end_matches('/');
    Some(match (kind, what["proposalId"].as_str()) {
        ("plan", Some(id)) => format!("{base}/approvals/{id}"),
        _ => format!("{base}/"),
    })
}

/// Runs the command once with `what` on stdin; everything that goes wrong is logged.
async fn run(config: &NotifyConfig, kind: &str, what: &Value) {
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(&config.command)
        .env("PLANHOST_NOTIFY_KIND", kind)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            tracing::warn!(%error, command = %config.command, "notify: the command did not start");
            return;
        }
    };
    let pid = child.id();
    if let Some(mut stdin) = child.stdin.take() {
        let line = format!("{what}\n");
        // A command that does not read its stdin is fine.
        let _ = stdin.write_all(line.as_bytes()).await;
    }
    let timeout = Duration::from_millis(config.timeout_ms);
    match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(Ok(out)) if out.status.success() => {
            tracing::debug!(kind, "notify: sent");
        }
        Ok(Ok(out)) => tracing::warn!(
            kind,
            status = %out.status,
            stderr = %String::from_utf8_lossy(&out.stderr).trim(),
            "notify: the command failed"
        ),
        Ok(Err(error)) => tracing::warn!(%error, "notify: waiting for the command failed"),
        Err(_) => {
            // Its whole group: whatever it started goes too.
            if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok())
                && let Some(pid) = rustix::process::Pid::from_raw(pid)
            {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
            tracing::warn!(
                kind,
                ?timeout,
                "notify: the command took too long and was killed"
            );
        }
    }
}

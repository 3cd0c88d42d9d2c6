//! The service: started once per state directory, connected to by every client (a transport's
//! or an embedding app's in-process one).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use planhost_core::{Clock, EventBody, Platform, Resolver, Role};
use planhost_protocol::{
    InitializeParams, InitializeResult, METHODS, MethodInfo, PROTOCOL_VERSION, ServerNotification,
};
use planhost_store::{AuditSink, AuditWriter, FenceReport, MigrationReport, PublicationRecord};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::actor::{HostHandle, HostThread, spawn_host};
use crate::authority::ToolAuthority;
use crate::authority::policy_cache::PolicyCache;
use crate::connection::{Caller, Connection, Notifications};
use crate::engine::Engine;
use crate::fanout::{CONNECTION_QUEUE, Fanout};
use crate::lineage::Peer;
use crate::shells::Shells;
use crate::{Result, ServiceError};

/// How to start a service.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// The SQLite database (created, migrated and fenced at start).
    pub db_path: PathBuf,
    /// The state directory `app.version` reports.
    pub state_dir: PathBuf,
    /// The clock: [`crate::SystemClock`] in production, a
    /// [`planhost_core::ManualClock`] in tests.
    pub clock: Arc<dyn Clock>,
    /// Whose shell catalog applies.
    pub platform: Platform,
}

impl ServiceConfig {
    /// The production configuration for a state directory: `planhost.sqlite` inside it, the wall
    /// clock, this platform's shells.
    pub fn new(state_dir: impl Into<PathBuf>) -> Self {
        let state_dir = state_dir.into();
        Self {
            db_path: state_dir.join("planhost.sqlite"),
            state_dir,
            clock: Arc::new(crate::SystemClock),
            platform: Platform::current(),
        }
    }
}

/// What starting did before the service could serve.
#[derive(Debug)]
pub struct Started {
    /// The running service.
    pub service: Service,
    /// Schema creation or migration.
    pub migration: MigrationReport,
    /// What the startup fence interrupted.
    pub fence: FenceReport,
    /// Publication approvals reconciled against the disk at startup.
    pub reconciled: Vec<PublicationRecord>,
    /// Temp files a crash left in sessions' `.pi/plan/` and `.pi/plans/`, removed at startup.
    pub swept: Vec<std::path::PathBuf>,
}

/// The running service. Cheap to clone; [`Service::shutdown`] stops it.
#[derive(Clone)]
pub struct Service {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service").finish_non_exhaustive()
    }
}

/// Everything the handlers share.
pub(crate) struct Inner {
    pub(crate) host: HostHandle,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) state_dir: PathBuf,
    pub(crate) started: Instant,
    pub(crate) fanout: Arc<Fanout>,
    pub(crate) policy: Arc<PolicyCache>,
    pub(crate) tools: Arc<ToolAuthority>,
    pub(crate) audit: AuditSink,
    pub(crate) shells: Shells,
    /// Plan diffs made, and the one permit to make another.
    pub(crate) diffs: crate::handlers::changes::Diffs,
    /// The processes that hold (or held, while they live) an `agent` connection.
    pub(crate) agent_roots: crate::lineage::AgentRoots,
    /// Where this host's approval surfaces are (DESIGN decision 14).
    pub(crate) surfaces: crate::reach::Surfaces,
    /// How the web page served beside this host makes a new access token (registered by the
    /// page when it starts; `app.rotateWebToken` calls it).
    pub(crate) web_token_rotation: std::sync::OnceLock<WebTokenRotation>,
    /// How the host starts its page on a person's request (registered by `planhost serve`).
    pub(crate) page_starter: std::sync::OnceLock<PageStarter>,
    next_connection: AtomicU64,
    threads: Mutex<Option<(HostThread, AuditWriter)>>,
}

impl Inner {
    /// Runs `f` on the engine's thread.
    pub(crate) async fn engine<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Engine) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        match self.host.call(f).await {
            Ok(result) => result,
            Err(_) => Err(ServiceError::Stopped),
        }
    }
}

/// The client name of the web page's in-process connections.
const WEB_CLIENT: &str = "planhost-web";

/// Where an approver connection's answers come from, by what the kernel says of its peer (a
/// declaration proves nothing: the approver role was already refused to anything under an
/// agent). A process that is also the agent (pi's extension) answers in its own dialog; a
/// process with a controlling terminal is a person's terminal.
fn answer_surface(peer: Peer, roles: &[Role], client: &str) -> planhost_core::AnswerSurface {
    use planhost_core::AnswerSurface as S;
    match peer {
        // The page's own in-process connection, for a browser it could not find.
        Peer::Embedded if client == WEB_CLIENT => S::WebPage,
        Peer::Embedded => S::Embedded,
        Peer::WebClient(_) => S::WebPage,
        Peer::Process(_) if roles.contains(&Role::Agent) => S::FaceDialog,
        Peer::Process(None) => S::Client,
        Peer::Process(Some(pid)) => {
            #[cfg(target_os = "linux")]
            let terminal = planhost_exec::lineage::has_controlling_terminal(pid) == Some(true);
            #[cfg(not(target_os = "linux"))]
            let terminal = {
                let _ = pid;
                false
            };
            if terminal { S::Terminal } else { S::Client }
        }
    }
}

/// A web page's token rotation: makes a new token, or says why it could not.
pub type WebTokenRotation = Box<dyn Fn() -> std::result::Result<(), String> + Send + Sync>;

/// How the host that serves this service starts its web page on request: the page's address,
/// whether this call started it, or why it could not.
pub type PageStarter = Box<
    dyn Fn() -> std::pin::Pin<
            Box<
                dyn std::future::Future<Output = std::result::Result<(String, bool), String>>
                    + Send,
            >,
        > + Send
        + Sync,
>;

impl Service {
    /// Registers how the host starts its web page when a person asks (`app.startWeb`: a host an
    /// agent's hook started serves none). Once per service.
    pub fn set_page_starter(&self, start: PageStarter) -> std::result::Result<(), &'static str> {
        self.inner
            .page_starter
            .set(start)
            .map_err(|_| "a page starter is already registered")
    }

    /// Tells the service where its socket is (the host's transport knows): a command that
    /// reaches it is one that could answer a plan.
    pub fn set_socket_surface(&self, socket: &std::path::Path) {
        self.inner.surfaces.set_socket(socket);
    }

    /// Tells the service an address its web page serves.
    pub fn add_page_surface(&self, address: String) {
        self.inner.surfaces.add_page(address);
    }

    /// Registers how the web page served beside this host rotates its access token, so a
    /// person's `app.rotateWebToken` (the approver role: never the agent's own commands) reaches
    /// it. Once per service; a second registration is refused.
    pub fn set_web_token_rotation(
        &self,
        rotate: WebTokenRotation,
    ) -> std::result::Result<(), &'static str> {
        self.inner
            .web_token_rotation
            .set(rotate)
            .map_err(|_| "a web page already registered its token rotation")
    }

    /// Opens the database (migration with a backup, the startup fence, publication
    /// reconciliation) and starts the state thread, the expiry timer and the audit writer.
    pub fn start(config: ServiceConfig) -> Result<Started> {
        let opened = Engine::open(&config.db_path, Arc::clone(&config.clock))?;
        let (audit, audit_writer) = AuditWriter::spawn(&config.db_path)?;
        let fanout = Arc::new(Fanout::default());
        let policy = Arc::new(PolicyCache::default());
        let tools = Arc::new(ToolAuthority::default());
        let hooks = (Arc::clone(&fanout), Arc::clone(&policy), Arc::clone(&tools));
        let (host, thread) = spawn_host(opened.engine, move |events| {
            let (fanout, policy, tools) = &hooks;
            for event in events {
                // Before the change's caller gets its reply: caches and grants follow the state.
                policy.invalidate(&event.session_id);
                match &event.body {
                    EventBody::TurnEnded { turn_id, .. } => {
                        tools.turn_closed(fanout, event.at, &event.session_id, turn_id);
                    }
                    EventBody::SessionUpdated { .. } => {
                        tools.session_changed(fanout, event.at, &event.session_id);
                    }
                    EventBody::TurnStarted { .. }
                    | EventBody::ApprovalChanged { .. }
                    | EventBody::ExecutionChanged { .. }
                    | EventBody::PermissionAsked { .. }
                    | EventBody::PermissionResolved { .. }
                    | EventBody::CheckpointSaved { .. }
                    | EventBody::PublicationChanged { .. }
                    | EventBody::HandoffChanged { .. } => {}
                }
                let session = event.session_id.clone();
                fanout.send_session(&session, &ServerNotification::StateChanged(event));
            }
        })
        .map_err(|e| ServiceError::Internal(format!("starting the state thread: {e}")))?;
        let surfaces = crate::reach::Surfaces::default();
        surfaces.set_state_dir(&config.state_dir);
        if let Some(name) = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.file_name().map(|n| n.to_string_lossy().into_owned()))
            .filter(|name| name.starts_with("planhost"))
        {
            surfaces.add_program(name);
        }
        let inner = Inner {
            host,
            clock: config.clock,
            state_dir: config.state_dir,
            surfaces,
            started: Instant::now(),
            fanout,
            policy,
            tools,
            audit,
            shells: Shells {
                platform: config.platform,
            },
            diffs: crate::handlers::changes::Diffs::default(),
            agent_roots: crate::lineage::AgentRoots::default(),
            web_token_rotation: std::sync::OnceLock::new(),
            page_starter: std::sync::OnceLock::new(),
            next_connection: AtomicU64::new(1),
            threads: Mutex::new(Some((thread, audit_writer))),
        };
        Ok(Started {
            service: Service {
                inner: Arc::new(inner),
            },
            migration: opened.migration,
            fence: opened.fence,
            reconciled: opened.reconciled,
            swept: opened.swept,
        })
    }

    /// The first thing `initialize` checks, before any other field: a client of another
    /// protocol version is told so, naming both versions (a v1 client sends no `roles`, and
    /// "missing field `roles`" would not tell it what is wrong). A hello without a version is
    /// left to the params check, which names the missing field.
    pub fn check_hello_version(params: &serde_json::Value) -> Result<()> {
        let Some(version) = params.get("protocolVersion") else {
            return Ok(());
        };
        if version.as_u64() == Some(u64::from(PROTOCOL_VERSION)) {
            return Ok(());
        }
        let client = params
            .get("clientName")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("?");
        Err(ServiceError::refused(
            planhost_core::ErrorCode::ProtocolVersionMismatch,
            format!(
                "client {client} speaks protocol v{version}, this planhost speaks v{PROTOCOL_VERSION}"
            ),
        ))
    }

    /// The handshake: a new connection with the roles it declares, and the queue its
    /// notifications arrive on. The in-process client of an embedding app is this connection.
    ///
    /// `peer` is who is at the other end, as the transport knows it. A process peer that
    /// declares `approver` is refused (`ROLE_APPROVER_REFUSED`) when it runs under an agent
    /// (see [`Peer`]); one that declares `agent` becomes an agent root, so its children cannot
    /// approve. The check runs here so that every transport shares it.
    pub fn connect(
        &self,
        hello: &InitializeParams,
        peer: Peer,
    ) -> Result<(Connection, Notifications, InitializeResult)> {
        if hello.protocol_version != PROTOCOL_VERSION {
            return Err(ServiceError::refused(
                planhost_core::ErrorCode::ProtocolVersionMismatch,
                format!(
                    "client {} speaks protocol v{}, this planhost speaks v{}",
                    hello.client_name, hello.protocol_version, PROTOCOL_VERSION
                ),
            ));
        }
        let mut roles: Vec<Role> = Vec::new();
        for role in &hello.roles {
            if !roles.contains(role) {
                roles.push(*role);
            }
        }
        if roles.is_empty() {
            return Err(ServiceError::refused(
                planhost_core::ErrorCode::RolesInvalid,
                "initialize must declare at least one role: agent, approver or observer",
            ));
        }
        roles.sort();
        if hello.tool_activity && !roles.contains(&Role::Observer) {
            return Err(ServiceError::refused(
                planhost_core::ErrorCode::RoleForbidden,
                "toolActivity needs the observer role",
            ));
        }
        if roles.contains(&Role::Approver)
            && let Some(refusal) = self.inner.agent_roots.refuses(peer)
        {
            self.inner.audit.record(planhost_store::AuditRow {
                at: self.inner.clock.now(),
                session_id: None,
                turn_id: None,
                tool_call_id: None,
                action: planhost_core::AuditAction::RoleRefused,
                detail: serde_json::json!({
                    "client": hello.client_name,
                    "roles": roles,
                    "refused": Role::Approver,
                    "code": planhost_core::ErrorCode::RoleApproverRefused,
                    "peerPid": peer.pid(),
                    "why": refusal.why,
                    "byPid": refusal.by,
                    "message": refusal.message,
                })
                .to_string(),
            });
            tracing::warn!(
                client = %hello.client_name, ?peer, why = refusal.why, by = ?refusal.by,
                "approver role refused"
            );
            return Err(ServiceError::refused(
                planhost_core::ErrorCode::RoleApproverRefused,
                refusal.message,
            ));
        }
        if let Some(agent) = hello.agent_process {
            if !roles.contains(&Role::Agent) {
                return Err(ServiceError::refused(
                    planhost_core::ErrorCode::AgentProcessInvalid,
                    "agentProcess names the agent a connection acts for: it needs the agent role",
                ));
            }
            self.inner
                .agent_roots
                .add_declared(peer, agent)
                .map_err(|message| {
                    ServiceError::refused(planhost_core::ErrorCode::AgentProcessInvalid, message)
                })?;
        }
        if roles.contains(&Role::Agent) {
            self.inner.agent_roots.add(peer);
        }
        let id = self.inner.next_connection.fetch_add(1, Ordering::Relaxed);
        let (queue, rx) = mpsc::channel(CONNECTION_QUEUE);
        let kill = CancellationToken::new();
        self.inner.fanout.add(
            id,
            queue.clone(),
            kill.clone(),
            hello.tool_activity,
            hello.events,
        );
        let via = roles
            .contains(&Role::Approver)
            .then(|| answer_surface(peer, &roles, &hello.client_name));
        // An agent's face (its extension, its hook) is never one of this host's runs: a
        // command planhost runs that connects as the agent is told so on what it asks.
        let inside_run = if roles.contains(&Role::Agent) {
            self.inner.agent_roots.inside_runs(peer)
        } else {
            None
        };
        let caller = Caller {
            conn: id,
            by: Resolver {
                client: hello.client_name.clone(),
                roles: roles.clone(),
                via,
            },
            inside_run,
            notes: queue,
            kill,
        };
        let result = InitializeResult {
            protocol_version: PROTOCOL_VERSION,
            server_name: "planhost".into(),
            server_version: env!("CARGO_PKG_VERSION").into(),
            connection_id: id,
            roles,
            methods: METHODS
                .iter()
                .map(|m| MethodInfo {
                    name: m.name.into(),
                    access: m.access,
                })
                .collect(),
        };
        Ok((
            Connection::new(Arc::clone(&self.inner), caller),
            Notifications::new(rx),
            result,
        ))
    }

    /// Makes the expiry timer re-check deadlines now (after a test moved its clock).
    pub fn poke(&self) {
        self.inner.host.poke();
    }

    /// Stops on request (`planhost stop`, SIGTERM, Ctrl-C): interrupts what is pending, queued
    /// or running exactly as the next start's fence would (the events reach every client now),
    /// then tells every connection the host is stopping. The transport closes next, then
    /// [`Service::shutdown`].
    pub async fn stop(&self, reason: &str) -> Result<planhost_store::FenceReport> {
        let report = self.inner.engine(|e| Ok(e.store().stop_fence()?)).await?;
        self.inner
            .fanout
            .send_all(&ServerNotification::HostStopping(
                planhost_protocol::HostStopping {
                    reason: reason.to_owned(),
                },
            ));
        Ok(report)
    }

    /// Stops the service: jobs already queued finish, every later call is `HOST_STOPPED`, and
    /// this returns once the state thread and the audit writer have stopped (what they had
    /// queued is committed). Running tool calls are the connections' to cancel.
    pub fn shutdown(&self) {
        self.inner.host.stop();
        self.inner.audit.stop();
        let threads = self
            .inner
            .threads
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some((host, audit)) = threads {
            host.join();
            audit.join();
        }
    }
}

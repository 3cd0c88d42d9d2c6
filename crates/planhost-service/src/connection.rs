//! One client's connection: the in-process client of an embedding app, and what every
//! transport wraps. Every request passes the role rule, then one exhaustive dispatch.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use planhost_core::{ErrorCode, Resolver, Role};
use planhost_protocol::{ClientRequest, Method, ServerNotification, ServerResult};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::handlers::{admin, agent, changes, checkpoints, plans, publications, sessions};
use crate::service::Inner;
use crate::{Result, ServiceError};

/// Who is calling: the connection, the client and roles it declared, where its own
/// notifications go, and the token that dies with it.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub(crate) conn: u64,
    pub(crate) by: Resolver,
    /// Why the peer is one of this host's runs (read once, at `initialize`, for an agent
    /// connection); `None` when it is not.
    pub(crate) inside_run: Option<String>,
    pub(crate) notes: mpsc::Sender<ServerNotification>,
    pub(crate) kill: CancellationToken,
}

/// The notifications of one connection, in order: every committed state change (published
/// before the change's reply is returned) and the output of this connection's own tool calls.
#[derive(Debug)]
pub struct Notifications {
    rx: mpsc::Receiver<ServerNotification>,
}

impl Notifications {
    pub(crate) fn new(rx: mpsc::Receiver<ServerNotification>) -> Self {
        Self { rx }
    }

    /// The next notification; `None` once the connection is closed and the queue drained.
    pub async fn recv(&mut self) -> Option<ServerNotification> {
        self.rx.recv().await
    }

    /// The next notification if one is queued now.
    pub fn try_recv(&mut self) -> Option<ServerNotification> {
        self.rx.try_recv().ok()
    }
}

struct ConnInner {
    svc: Arc<Inner>,
    caller: Caller,
    closed: AtomicBool,
}

impl ConnInner {
    fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        self.svc.fanout.remove(self.caller.conn);
        self.svc.tools.connection_closed(self.caller.conn);
        self.caller.kill.cancel();
    }
}

impl Drop for ConnInner {
    fn drop(&mut self) {
        self.close();
    }
}

/// A connection to the service. Clones share it; [`Connection::close`] (or dropping the last
/// clone) ends it: its running tool calls are cancelled and their process trees killed.
#[derive(Clone)]
pub struct Connection {
    inner: Arc<ConnInner>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("id", &self.inner.caller.conn)
            .field("client", &self.inner.caller.by.client)
            .finish_non_exhaustive()
    }
}

impl Connection {
    pub(crate) fn new(svc: Arc<Inner>, caller: Caller) -> Self {
        Self {
            inner: Arc::new(ConnInner {
                svc,
                caller,
                closed: AtomicBool::new(false),
            }),
        }
    }

    /// The connection's id.
    pub fn id(&self) -> u64 {
        self.inner.caller.conn
    }

    /// The roles it declared.
    pub fn roles(&self) -> &[Role] {
        &self.inner.caller.by.roles
    }

    /// Cancelled when the connection ends, including when the service drops it for not
    /// reading its notifications: a transport stops serving it then.
    pub fn closed_token(&self) -> CancellationToken {
        self.inner.caller.kill.clone()
    }

    /// Ends the connection now (idempotent).
    pub fn close(&self) {
        self.inner.close();
    }

    /// One typed call: `conn.call::<methods::AppHealth>(Empty {}).await`.
    pub async fn call<M: Method>(&self, params: M::Params) -> Result<M::Result> {
        let result = self.handle(M::request(params)).await?;
        M::result(result).ok_or_else(|| {
            ServiceError::Internal(format!("{} answered with another method's result", M::NAME))
        })
    }

    /// Handles one request: the role rule, then the method's handler.
    pub async fn handle(&self, request: ClientRequest) -> Result<ServerResult> {
        let caller = &self.inner.caller;
        let access = request.access();
        if !access.permits(&caller.by.roles) {
            return Err(ServiceError::forbidden(
                request.method(),
                access,
                &caller.by.roles,
            ));
        }
        // A request read before the connection closed still runs: its tool calls start under
        // the connection's (already cancelled) token, so they are cancelled, killed and audited,
        // and their grants are used up, never left for another connection.
        dispatch(&self.inner.svc, caller, request).await
    }
}

/// A command planhost runs cannot speak for the agent (DESIGN decision 14): it would claim a
/// person's yes in the agent's dialog, or run a command the person was asked about.
fn refuse_inside_run(caller: &Caller) -> Result<()> {
    match &caller.inside_run {
        None => Ok(()),
        Some(why) => Err(ServiceError::refused(
            ErrorCode::RoleForbidden,
            format!(
                "this process is one of the commands planhost runs ({why}): it cannot speak for \
                 the agent"
            ),
        )),
    }
}

/// The one dispatch: a method without a handler does not compile.
async fn dispatch(
    svc: &Arc<Inner>,
    caller: &Caller,
    request: ClientRequest,
) -> Result<ServerResult> {
    use ClientRequest as Q;
    use ServerResult as R;
    let tools = &svc.tools;
    Ok(match request {
        Q::Initialize(_) => {
            return Err(ServiceError::refused(
                ErrorCode::AlreadyInitialized,
                "this connection is already initialized",
            ));
        }
        Q::AgentEvent(p) => {
            refuse_inside_run(caller)?;
            R::AgentEvent(agent::event(svc, caller, p).await?)
        }
        Q::AgentRun(p) => {
            refuse_inside_run(caller)?;
            R::AgentRun(tools.run_routed(svc, caller, p).await?)
        }
        Q::AppHealth(_) => R::AppHealth(admin::health(svc)),
        Q::AppVersion(_) => R::AppVersion(admin::version(svc)),
        Q::AppStartWeb(_) => R::AppStartWeb(admin::start_web(svc).await?),
        Q::AppRotateWebToken(_) => R::AppRotateWebToken(admin::rotate_web_token(svc)?),
        Q::SessionsOpen(p) => {
            let session = sessions::open(svc, p).await?;
            // An `own` connection watches what it opened (from its next event on).
            svc.fanout.opened(caller.conn, &session.id);
            R::SessionsOpen(session)
        }
        Q::SessionsGet(p) => R::SessionsGet(sessions::get(svc, p.session_id).await?),
        Q::SessionsList(p) => R::SessionsList(sessions::list(svc, p).await?),
        Q::SessionsSetMode(p) => R::SessionsSetMode(sessions::set_mode(svc, p).await?),
        Q::SessionsConfigure(p) => R::SessionsConfigure(sessions::configure(svc, p).await?),
        Q::TurnsBegin(p) => R::TurnsBegin(sessions::begin_turn(svc, p).await?),
        Q::TurnsEnd(p) => R::TurnsEnd(sessions::end_turn(svc, p).await?),
        Q::ToolsAuthorize(p) => R::ToolsAuthorize(
            tools
                .authorize(svc, p, planhost_core::DraftWrite::No, None)
                .await?,
        ),
        Q::ToolsExecute(p) => R::ToolsExecute(tools.execute(svc, caller, p).await?),
        Q::ToolsCancel(p) => R::ToolsCancel(tools.cancel(&p)),
        Q::ToolsStop(p) => R::ToolsStop(tools.stop(svc, caller, &p).await?),
        Q::ToolsFinished(p) => R::ToolsFinished(tools.finished(svc, &p)),
        Q::PermissionsList(p) => R::PermissionsList(tools.list_asks(&p)),
        Q::PermissionsResolve(p) => R::PermissionsResolve(tools.resolve(svc, caller, p).await?),
        Q::PlansEnter(p) => R::PlansEnter(plans::enter(svc, p).await?),
        Q::PlansSubmit(p) => R::PlansSubmit(plans::submit(svc, p).await?),
        Q::PlansList(p) => R::PlansList(plans::list(svc, p).await?),
        Q::PlansGet(p) => R::PlansGet(plans::get(svc, p).await?),
        Q::PlansChanges(p) => R::PlansChanges(changes::changes(svc, p).await?),
        Q::PlansOrphans(_) => R::PlansOrphans(changes::orphans(svc).await?),
        Q::PlansResolve(p) => R::PlansResolve(plans::resolve(svc, caller, p).await?),
        Q::PlansStatus(p) => R::PlansStatus(checkpoints::status(svc, p).await?),
        Q::PlansExitOptions(p) => R::PlansExitOptions(checkpoints::exit_options(svc, p).await?),
        Q::PlansExit(p) => R::PlansExit(checkpoints::exit(svc, p).await?),
        Q::PlansParseCommand(p) => R::PlansParseCommand(checkpoints::parse_command(&p)),
        Q::PlansSwitchBranch(p) => R::PlansSwitchBranch(checkpoints::switch_branch(svc, p).await?),
        Q::ExecutionsClaim(p) => R::ExecutionsClaim(plans::claim(svc, p).await?),
        Q::ExecutionsEnd(p) => R::ExecutionsEnd(plans::end_execution(svc, p).await?),
        Q::CheckpointsSave(p) => R::CheckpointsSave(checkpoints::save(svc, p).await?),
        Q::CheckpointsCapture(p) => R::CheckpointsCapture(checkpoints::capture(svc, p).await?),
        Q::CheckpointsLatest(p) => R::CheckpointsLatest(checkpoints::latest(svc, p).await?),
        Q::CheckpointsSeen(p) => R::CheckpointsSeen(checkpoints::seen(svc, caller, p).await?),
        Q::CheckpointsProjection(p) => {
            R::CheckpointsProjection(checkpoints::projection(svc, p).await?)
        }
        Q::PublicationsRequest(p) => R::PublicationsRequest(publications::request(svc, p).await?),
        Q::PublicationsList(p) => R::PublicationsList(publications::list(svc, p).await?),
        Q::PublicationsResolve(p) => {
            R::PublicationsResolve(publications::resolve(svc, caller, p).await?)
        }
        Q::HandoffApprove(p) => R::HandoffApprove(checkpoints::handoff_approve(svc, p).await?),
        Q::HandoffAccept(p) => R::HandoffAccept(checkpoints::handoff_accept(svc, p).await?),
        Q::HandoffCancel(p) => R::HandoffCancel(checkpoints::handoff_cancel(svc, p).await?),
        Q::HandoffRetry(p) => R::HandoffRetry(checkpoints::handoff_retry(svc, p).await?),
        Q::ToolsetApply(p) => R::ToolsetApply(checkpoints::toolset_apply(svc, p).await?),
        Q::ToolsetRestore(p) => R::ToolsetRestore(checkpoints::toolset_restore(svc, p).await?),
        Q::ToolsetObserve(p) => R::ToolsetObserve(checkpoints::toolset_observe(svc, p).await?),
        Q::ToolsetAccept(p) => R::ToolsetAccept(checkpoints::toolset_accept(svc, p).await?),
        Q::ShellsCatalog(_) => R::ShellsCatalog(admin::shells(svc).await?),
        Q::SettingsGet(_) => R::SettingsGet(admin::settings(svc).await?),
        Q::SettingsSet(p) => R::SettingsSet(admin::set_settings(svc, p).await?),
        Q::AuditList(p) => R::AuditList(admin::audit(svc, p).await?),
    })
}

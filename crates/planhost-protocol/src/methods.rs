//! The method table: every method's name with its params and result types, and every
//! notification with its payload. The JSON Schema export is generated from this table.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value};

use crate::plans::*;
use crate::types::*;

/// The protocol version this crate describes. Bumped on any incompatible change.
pub const PROTOCOL_VERSION: u32 = 1;

/// One method: its name and the schemas of its params and result.
#[derive(Debug, Clone, Copy)]
pub struct MethodSpec {
    /// Dotted name.
    pub name: &'static str,
    /// One-line description.
    pub doc: &'static str,
    params: fn(&mut SchemaGenerator) -> Schema,
    result: fn(&mut SchemaGenerator) -> Schema,
}

fn schema<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

macro_rules! methods {
    ($($name:literal => $params:ty, $result:ty, $doc:literal;)+) => {
        /// Every method the host serves, in documentation order.
        pub const METHODS: &[MethodSpec] = &[
            $(MethodSpec { name: $name, doc: $doc, params: schema::<$params>, result: schema::<$result> },)+
        ];
    };
}

methods! {
    "initialize" => InitializeParams, InitializeResult, "Handshake: exchange protocol versions. Must come first.";
    "app.health" => Empty, HealthResult, "Liveness; the cheapest round trip.";
    "app.version" => Empty, VersionResult, "Versions of planhost, the protocol, the schema and SQLite.";
    "sessions.open" => OpenSessionParams, SessionInfo, "Open a session, or reopen it by external id.";
    "sessions.get" => SessionRef, SessionInfo, "One session with its active turn and pending approval.";
    "sessions.list" => Empty, SessionList, "Every session.";
    "sessions.setMode" => SetModeParams, SessionInfo, "A person selects Agent or Plan (idle only).";
    "sessions.configure" => ConfigureParams, SessionInfo, "Permission mode, shell, policy preset, provider, model (idle only).";
    "turns.begin" => BeginTurnParams, TurnInfo, "Begin a user or scheduled turn; pins the shell.";
    "turns.end" => TurnRef, TurnInfo, "End the active turn normally.";
    "turns.abort" => TurnRef, TurnInfo, "Abort the active turn; interrupts what it raised or ran.";
    "tools.authorize" => AuthorizeParams, AuthorizeResult, "May this tool call run? allow, deny or ask.";
    "tools.execute" => ExecuteParams, ExecuteResult, "Run an authorized Read, Glob, Grep, Write, Edit or Bash call.";
    "tools.cancel" => CancelParams, CancelResult, "Cancel a running tool call; kills its process tree.";
    "permissions.resolve" => ResolvePermissionParams, PermissionAsk, "Answer an ask.";
    "permissions.pending" => Empty, PermissionAsks, "Open asks.";
    "plans.enter" => EnterPlanParams, SessionInfo, "The agent's EnterPlanMode tool.";
    "plans.submit" => SubmitPlanParams, ApprovalInfo, "The SubmitPlan tool: immutable artifact + pending approval.";
    "plans.pending" => PlansFilter, ApprovalList, "Pending approvals (what a reloaded surface restores).";
    "plans.list" => PlansFilter, ApprovalList, "Every approval, newest first.";
    "plans.get" => ProposalRef, PlanDetail, "One approval with its exact Markdown.";
    "plans.resolve" => ResolvePlanParams, ApprovalInfo, "Approve (with a permission mode) or reject.";
    "plans.checkpoint" => CheckpointParams, CheckpointInfo, "Save a complete plan snapshot (update_plan_draft) with optimistic revision.";
    "plans.capture" => CaptureParams, CaptureResult, "Offer a final assistant message for <proposed_plan> capture.";
    "plans.projection" => BranchRef, ProjectionResult, "The labelled latest checkpoint to inject into a model call.";
    "plans.preview" => BranchRef, PreviewResult, "The latest exact checkpoint of the branch (/plan preview).";
    "plans.status" => BranchRef, PlanStatusResult, "Mode, revision, publication state, path (/plan status).";
    "plans.publish" => PublishParams, PublishResult, "Publish the latest checkpoint to .pi/plans (/plan save): synced or an approval.";
    "plans.publishResolve" => PublishResolveParams, PublishResolveResult, "Approve (write) or reject a publication.";
    "plans.publications" => PublicationsParams, PublicationList, "Publication approvals (for approval surfaces).";
    "plans.branchSwitched" => SessionRef, BranchSwitchResult, "The client moved to another branch: clears every pending plan approval.";
    "plans.exit" => ExitParams, ExitResult, "The /plan exit offer, or the chosen exit.";
    "plans.command" => CommandParams, CommandResult, "Parse a typed /plan command line.";
    "plans.handoff" => HandoffParams, HandoffResult, "The seed 004 handoff: enter, approve, accept, cancel, retry, exit.";
    "plans.tools" => ToolsParams, ToolsResult, "Tool baseline and drift: enter, observe, resolve, exit.";
    "executions.claim" => ExecutionRef, TurnInfo, "The worker claims the queued execution; starts its turn.";
    "executions.finish" => FinishExecutionParams, ApprovalInfo, "The worker finishes the execution.";
    "shell.catalog" => Empty, ShellCatalog, "The platform's shell catalog and the effective shell.";
    "settings.get" => Empty, Settings, "Host settings.";
    "settings.set" => Settings, Settings, "Change host settings; present fields only.";
    "audit.list" => AuditParams, AuditList, "The audit log, newest first.";
}

/// Notification names.
pub mod notifications {
    /// A committed state change of one session: a [`planhost_core::Event`].
    pub const STATE_CHANGED: &str = "state.changed";
    /// One ordered chunk of a running tool's output: a [`crate::ToolOutput`].
    pub const TOOL_OUTPUT: &str = "tools.output";
}

/// Looks a method up by name.
pub fn method(name: &str) -> Option<&'static MethodSpec> {
    METHODS.iter().find(|m| m.name == name)
}

/// The whole protocol as one JSON Schema document: `methods.<name>.{params,result}`,
/// `notifications.<name>`, and shared `$defs`.
pub fn protocol_schema() -> Value {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let mut methods = Map::new();
    for m in METHODS {
        let params = (m.params)(&mut generator);
        let result = (m.result)(&mut generator);
        methods.insert(
            m.name.into(),
            serde_json::json!({ "description": m.doc, "params": params, "result": result }),
        );
    }
    let mut notes = Map::new();
    notes.insert(
        notifications::STATE_CHANGED.into(),
        generator.subschema_for::<planhost_core::Event>().to_value(),
    );
    notes.insert(
        notifications::TOOL_OUTPUT.into(),
        generator.subschema_for::<ToolOutput>().to_value(),
    );
    let error = generator.subschema_for::<crate::RpcError>().to_value();
    let defs: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "planhost JSON-RPC protocol",
        "protocolVersion": PROTOCOL_VERSION,
        "methods": methods,
        "notifications": notes,
        "error": error,
        "$defs": defs,
    })
}

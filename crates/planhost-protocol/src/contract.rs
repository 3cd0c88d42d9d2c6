//! The contract: one line per method pairs its name, its role rule, its params and its result.
//! From that line come [`ClientRequest`] (what a client asks), [`ServerResult`] (what the host
//! answers), a marker type in [`methods`] implementing [`Method`] (for typed clients), and the
//! [`METHODS`] table the schema, the TypeScript declarations and the docs are generated from.
//! A host's dispatch matches on [`ClientRequest`], so a method without a handler does not compile.

use planhost_core::{Access, ErrorCode, Event};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::agent::*;
use crate::app::*;
use crate::changes::*;
use crate::checkpoints::*;
use crate::plans::*;
use crate::publications::*;
use crate::sessions::*;
use crate::tools::*;

/// The protocol version this crate describes. Bumped on any incompatible change.
pub const PROTOCOL_VERSION: u32 = 2;

/// One method of the contract, as a type: what typed clients call.
pub trait Method {
    /// Dotted name on the wire.
    const NAME: &'static str;
    /// Which connections may call it.
    const ACCESS: Access;
    /// Its params.
    type Params: Serialize + DeserializeOwned + JsonSchema + Send + 'static;
    /// Its result.
    type Result: Serialize + DeserializeOwned + JsonSchema + Send + 'static;
    /// The params as a request value.
    fn request(params: Self::Params) -> ClientRequest;
    /// This method's result out of a [`ServerResult`]; `None` if it is another method's.
    fn result(result: ServerResult) -> Option<Self::Result>;
}

/// One row of the method table.
#[derive(Debug, Clone, Copy)]
pub struct MethodSpec {
    /// Dotted name.
    pub name: &'static str,
    /// One-line description.
    pub doc: &'static str,
    /// The role rule.
    pub access: Access,
    /// The params type's name.
    pub params_type: &'static str,
    /// The result type's name.
    pub result_type: &'static str,
    params: fn(&mut SchemaGenerator) -> Schema,
    result: fn(&mut SchemaGenerator) -> Schema,
}

impl MethodSpec {
    /// The params schema (registering shared definitions in `generator`).
    pub fn params_schema(&self, generator: &mut SchemaGenerator) -> Schema {
        (self.params)(generator)
    }

    /// The result schema (registering shared definitions in `generator`).
    pub fn result_schema(&self, generator: &mut SchemaGenerator) -> Schema {
        (self.result)(generator)
    }
}

fn schema<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

/// Why a request line could not become a [`ClientRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError {
    /// `METHOD_NOT_FOUND` or `INVALID_PARAMS`.
    pub code: ErrorCode,
    /// What was wrong.
    pub message: String,
    /// The offending field, for invalid params.
    pub field: Option<String>,
}

/// Deserializes one method's params, naming the offending field on failure. A missing `params`
/// (`null`) is an empty object.
fn parse_params<T: DeserializeOwned>(value: Value) -> Result<T, RequestError> {
    let value = if value.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        value
    };
    serde_path_to_error::deserialize::<_, T>(value).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner().to_string();
        // serde names a missing or unknown top-level field only in its message: "missing field `x`".
        let field = if path == "." {
            inner
                .split('`')
                .nth(1)
                .filter(|f| !f.is_empty())
                .map(str::to_owned)
        } else {
            Some(path)
        };
        RequestError {
            code: ErrorCode::InvalidParams,
            message: match &field {
                Some(f) => format!("invalid params: {f}: {inner}"),
                None => format!("invalid params: {inner}"),
            },
            field,
        }
    })
}

/// Deserializes one method's params straight from their JSON text (`None`: absent or `null`, an
/// empty object), with no `Value` tree in between; `None` when that fails for any reason.
fn parse_params_text<T: DeserializeOwned>(text: Option<&str>) -> Option<T> {
    serde_json::from_str(text.unwrap_or("{}")).ok()
}

macro_rules! contract {
    ($($variant:ident = $name:literal, $access:ident, $params:ty => $result:ty, $doc:literal;)+) => {
        /// A request: one variant per method, holding its params.
        #[derive(Debug, Clone, PartialEq)]
        pub enum ClientRequest {
            $(#[doc = $doc] $variant($params),)+
        }

        /// A result: one variant per method, holding its result.
        #[derive(Debug, Clone, PartialEq)]
        #[allow(
            clippy::large_enum_variant,
            reason = "one result at a time, moved once to the wire; boxing each would cost every call"
        )]
        pub enum ServerResult {
            $(#[doc = $doc] $variant($result),)+
        }

        /// Marker types, one per method, for typed clients: `client.call::<methods::AppHealth>(…)`.
        pub mod methods {
            use super::*;
            $(
                #[doc = $doc]
                #[derive(Debug, Clone, Copy)]
                pub struct $variant;

                impl Method for $variant {
                    const NAME: &'static str = $name;
                    const ACCESS: Access = Access::$access;
                    type Params = $params;
                    type Result = $result;

                    fn request(params: $params) -> ClientRequest {
                        ClientRequest::$variant(params)
                    }

                    fn result(result: ServerResult) -> Option<$result> {
                        match result {
                            ServerResult::$variant(r) => Some(r),
                            #[allow(unreachable_patterns, clippy::wildcard_enum_match_arm)]
                            _ => None,
                        }
                    }
                }
            )+
        }

        /// Every method, in documentation order.
        pub const METHODS: &[MethodSpec] = &[
            $(MethodSpec {
                name: $name,
                doc: $doc,
                access: Access::$access,
                params_type: stringify!($params),
                result_type: stringify!($result),
                params: schema::<$params>,
                result: schema::<$result>,
            },)+
        ];

        impl ClientRequest {
            /// Parses a request from its method name and params.
            pub fn parse(method: &str, params: Value) -> Result<Self, RequestError> {
                match method {
                    $($name => Ok(ClientRequest::$variant(parse_params(params)?)),)+
                    other => Err(RequestError {
                        code: ErrorCode::MethodNotFound,
                        message: format!("unknown method {other:?}"),
                        field: None,
                    }),
                }
            }

            /// Reads a request straight from its method name and its params' JSON text as it
            /// came on the line (`None`: absent or `null`) into the typed params, with no
            /// `Value` in between. `None` when that fails for any reason: the caller then goes
            /// [`ClientRequest::parse`]'s way, whose error is the canonical one.
            pub fn parse_text(method: &str, params: Option<&str>) -> Option<Self> {
                match method {
                    $($name => parse_params_text(params).map(ClientRequest::$variant),)+
                    _ => None,
                }
            }

            /// The method's name.
            pub fn method(&self) -> &'static str {
                match self {
                    $(ClientRequest::$variant(_) => $name,)+
                }
            }

            /// Which connections may call it.
            pub fn access(&self) -> Access {
                match self {
                    $(ClientRequest::$variant(_) => Access::$access,)+
                }
            }

            /// The params as JSON.
            pub fn params(&self) -> serde_json::Result<Value> {
                match self {
                    $(ClientRequest::$variant(p) => serde_json::to_value(p),)+
                }
            }
        }

        /// A result serialises as its method's result type (untagged): a reply can be written
        /// straight from it, without a `Value` in between.
        impl serde::Serialize for ServerResult {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(ServerResult::$variant(r) => r.serialize(serializer),)+
                }
            }
        }

        impl ServerResult {
            /// The result as JSON.
            pub fn to_value(&self) -> serde_json::Result<Value> {
                match self {
                    $(ServerResult::$variant(r) => serde_json::to_value(r),)+
                }
            }

            /// The method it answers.
            pub fn method(&self) -> &'static str {
                match self {
                    $(ServerResult::$variant(_) => $name,)+
                }
            }
        }
    };
}

contract! {
    Initialize = "initialize", Any, InitializeParams => InitializeResult, "Handshake: the protocol version and the connection's roles. Must come first, once.";
    AppHealth = "app.health", Any, Empty => HealthResult, "Liveness; the cheapest round trip.";
    AppVersion = "app.version", Any, Empty => VersionResult, "Versions of planhost, the protocol, the schema and SQLite.";
    AppStartWeb = "app.startWeb", Approver, Empty => StartedWeb, "A person starts the web page in the running host (a host an agent's hook started serves none): its address. `WEB_NOT_SERVED` when this host cannot serve one (an embedding app, stdio).";
    AppRotateWebToken = "app.rotateWebToken", Approver, Empty => Empty, "A person replaces the web page's access token: every page opened with the old one stops working. `WEB_NOT_SERVED` when the host serves no page.";
    AgentEvent = "agent.event", Agent, AgentEventParams => AgentEventResult, "One event of an agent's session (start, prompt, tool proposed or finished, plan offered, draft, message, stop, end): the host runs the Plan-mode lifecycle and answers one directive with the rule that produced it.";
    AgentRun = "agent.run", Agent, AgentRunParams => AgentRunResult, "Run a shell command an agent's hook routed through the host: exactly the command `agent.event` allowed, in the host's runner (its scope, timeout and whole-tree kill), output streamed as `tools.output`.";
    SessionsOpen = "sessions.open", Agent, OpenSessionParams => SessionInfo, "Open a session, or reopen it by external id.";
    SessionsGet = "sessions.get", Any, SessionRef => SessionInfo, "One session with its running turn, pending approval and live execution.";
    SessionsList = "sessions.list", Any, SessionsFilter => SessionList, "Sessions, newest first.";
    SessionsSetMode = "sessions.setMode", Approver, SetModeParams => SessionInfo, "A person selects Agent or Plan (idle only).";
    SessionsConfigure = "sessions.configure", Approver, ConfigureParams => SessionInfo, "A person sets permission mode, shell, policy preset, provider or model (idle only).";
    TurnsBegin = "turns.begin", Agent, BeginTurnParams => TurnInfo, "Begin a user or scheduled turn; pins its shell and policy.";
    TurnsEnd = "turns.end", Agent, EndTurnParams => TurnInfo, "End the running turn: completed, or aborted (interrupting what it raised or ran).";
    ToolsAuthorize = "tools.authorize", Agent, AuthorizeParams => AuthorizeResult, "May this tool call run? allow, deny or ask.";
    ToolsExecute = "tools.execute", Agent, ExecuteParams => ExecuteResult, "Run an authorized Read, Glob, Grep, Write, Edit or Bash call.";
    ToolsCancel = "tools.cancel", Agent, CancelParams => CancelResult, "Cancel a running tool call; kills its process tree.";
    ToolsStop = "tools.stop", Approver, CancelParams => CancelResult, "A person stops a tool call the host is running: its process tree is killed, and the stop is on record with who gave it.";
    ToolsFinished = "tools.finished", Agent, FinishedParams => FinishedResult, "A tool the client ran itself after an allow finished: its grant is void.";
    PermissionsList = "permissions.list", Any, AsksFilter => AskList, "Permission asks, newest first.";
    PermissionsResolve = "permissions.resolve", Approver, ResolvePermissionParams => PermissionAsk, "A person answers an ask: allow or deny.";
    PlansEnter = "plans.enter", Agent, EnterPlanParams => SessionInfo, "The agent's EnterPlanMode tool.";
    PlansSubmit = "plans.submit", Agent, SubmitPlanParams => ApprovalInfo, "The SubmitPlan tool: an immutable artifact and a pending approval.";
    PlansList = "plans.list", Any, PlansFilter => ApprovalList, "Plan approvals, newest first.";
    PlansGet = "plans.get", Any, ProposalRef => PlanDetail, "One approval with its exact Markdown and whether the file still holds it.";
    PlansChanges = "plans.changes", Any, ProposalRef => PlanChanges, "What changed in a plan since the session's previous plan and since the checkpoint a person was last shown: bounded line diffs.";
    PlansOrphans = "plans.orphans", Any, Empty => OrphanArtifacts, "Files in the sessions' .pi/plan/ that no approval points to.";
    PlansResolve = "plans.resolve", Approver, ResolvePlanParams => ApprovalInfo, "A person approves (with a permission mode) or rejects a plan.";
    PlansStatus = "plans.status", Any, BranchRef => PlanStatusResult, "Mode, revision, publication state and path (/plan status).";
    PlansExitOptions = "plans.exitOptions", Any, BranchRef => ExitOptions, "What /plan exit offers now.";
    PlansExit = "plans.exit", Approver, ExitPlanParams => ExitPlanResult, "Leave Plan mode without publishing; checkpoints stay.";
    PlansParseCommand = "plans.parseCommand", Any, ParseCommandParams => ParsedCommand, "Parse a typed /plan line with the host's grammar.";
    PlansSwitchBranch = "plans.switchBranch", Agent, SessionRef => SwitchBranchResult, "The client moved to another branch (/tree): clears every approval bound to the old one.";
    ExecutionsClaim = "executions.claim", Agent, ExecutionRef => ClaimedExecution, "Claim the queued execution: starts its turn and returns the approved plan bytes.";
    ExecutionsEnd = "executions.end", Agent, EndExecutionParams => ExecutionInfo, "End the running execution: completed or interrupted.";
    CheckpointsSave = "checkpoints.save", Agent, SaveCheckpointParams => SavedCheckpoint, "Save a complete plan snapshot (update_plan_draft) with an optimistic revision.";
    CheckpointsCapture = "checkpoints.capture", Agent, CaptureParams => CaptureResult, "Offer a final assistant message for <proposed_plan> capture.";
    CheckpointsLatest = "checkpoints.latest", Any, BranchRef => CheckpointDetail, "The branch's latest exact checkpoint (/plan preview).";
    CheckpointsSeen = "checkpoints.seen", Approver, SeenCheckpointParams => CheckpointInfo, "A person was shown this checkpoint (pi's /plan preview): later plans are diffed against it.";
    CheckpointsProjection = "checkpoints.projection", Any, BranchRef => ProjectionResult, "The labelled latest checkpoint to inject into a model call.";
    PublicationsRequest = "publications.request", Agent, RequestPublicationParams => PublicationRequest, "Publish the latest checkpoint to .pi/plans (/plan save): synced, or a pending approval.";
    PublicationsList = "publications.list", Any, PublicationsFilter => PublicationList, "Publication approvals, newest first.";
    PublicationsResolve = "publications.resolve", Approver, ResolvePublicationParams => PublicationResolution, "A person approves (writes) or rejects a publication.";
    HandoffApprove = "handoff.approve", Approver, BranchRef => HandoffInfo, "A person approves the latest checkpoint for execution (seed 004).";
    HandoffAccept = "handoff.accept", Agent, AcceptHandoffParams => HandoffInfo, "The execution prompt started: the handoff is accepted.";
    HandoffCancel = "handoff.cancel", Approver, SessionRef => HandoffInfo, "A person cancels a pending handoff.";
    HandoffRetry = "handoff.retry", Approver, SessionRef => HandoffInfo, "After a restart, a person reviews a pending handoff again: a fresh token.";
    ToolsetApply = "toolset.apply", Agent, ApplyToolsetParams => ToolsetInfo, "In Plan: record the tools before Plan and return the set Plan applies under the session's preset.";
    ToolsetRestore = "toolset.restore", Agent, RestoreToolsetParams => RestoredToolset, "After Plan: the pre-Plan tools to make active again (seed 004's drift rule).";
    ToolsetObserve = "toolset.observe", Agent, ToolsetParams => ToolsetInfo, "Report the active tools; a change outside planhost is a conflict.";
    ToolsetAccept = "toolset.accept", Approver, ToolsetParams => ToolsetInfo, "A person accepts the changed tool set, clearing the conflict.";
    ShellsCatalog = "shells.catalog", Any, Empty => ShellCatalog, "The platform's shell catalog and the effective shell.";
    SettingsGet = "settings.get", Any, Empty => Settings, "Host settings.";
    SettingsSet = "settings.set", Approver, SettingsPatch => Settings, "A person changes host settings; absent fields are unchanged.";
    AuditList = "audit.list", Any, AuditFilter => AuditLog, "The audit log, newest first.";
}

/// Looks a method up by name.
pub fn method(name: &str) -> Option<&'static MethodSpec> {
    METHODS.iter().find(|m| m.name == name)
}

/// One notification of the contract: its name, payload type and doc.
#[derive(Debug, Clone, Copy)]
pub struct NotificationSpec {
    /// Dotted name.
    pub name: &'static str,
    /// Who receives it, and when.
    pub doc: &'static str,
    payload: fn(&mut SchemaGenerator) -> Schema,
}

impl NotificationSpec {
    /// The payload schema (registering shared definitions in `generator`).
    pub fn payload_schema(&self, generator: &mut SchemaGenerator) -> Schema {
        (self.payload)(generator)
    }
}

/// One line per notification: variant, name constant, dotted name, payload type, doc. Generates
/// the name constants, [`ServerNotification`], and [`NOTIFICATIONS`] (the schema's list).
macro_rules! notifications {
    ($($variant:ident = $constant:ident = $name:literal, $payload:ty, $doc:literal;)+) => {
        /// Notification names.
        pub mod notifications {
            $(#[doc = $doc] pub const $constant: &str = $name;)+
        }

        /// Something the host sends without being asked.
        #[derive(Debug, Clone, PartialEq)]
        pub enum ServerNotification {
            $(#[doc = $doc] $variant($payload),)+
        }

        impl ServerNotification {
            /// The notification's name.
            pub fn method(&self) -> &'static str {
                match self {
                    $(ServerNotification::$variant(_) => $name,)+
                }
            }

            /// The payload as JSON.
            pub fn params(&self) -> serde_json::Result<Value> {
                match self {
                    $(ServerNotification::$variant(p) => serde_json::to_value(p),)+
                }
            }

            /// Parses a notification by name (clients).
            pub fn parse(method: &str, params: Value) -> Option<Self> {
                match method {
                    $($name => serde_json::from_value(params).ok().map(ServerNotification::$variant),)+
                    _ => None,
                }
            }
        }

        /// Every notification, in declaration order.
        pub const NOTIFICATIONS: &[NotificationSpec] = &[
            $(NotificationSpec {
                name: $name,
                doc: $doc,
                payload: |g| g.subschema_for::<$payload>(),
            },)+
        ];
    };
}

notifications! {
    StateChanged = STATE_CHANGED = "state.changed", Event, "A committed state change of one session, to every connection.";
    ToolOutput = TOOL_OUTPUT = "tools.output", ToolOutput, "One ordered chunk of a running tool's output, to the calling connection only.";
    ToolActivity = TOOL_ACTIVITY = "tools.activity", ToolActivity, "A tool call changed state or finished, only to connections that asked for it.";
    HostStopping = HOST_STOPPING = "host.stopping", crate::HostStopping, "The host is stopping on request, to every connection.";
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn params_refuse_unknown_fields_but_initialize_ignores_them() {
        let err = ClientRequest::parse("sessions.get", json!({"sessionId": "s", "mode": "agent"}))
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidParams);
        assert_eq!(err.field.as_deref(), Some("mode"));
        let missing = ClientRequest::parse("sessions.get", json!({})).unwrap_err();
        assert_eq!(missing.field.as_deref(), Some("sessionId"));
        let nested = ClientRequest::parse("plans.list", json!({"status": ["pending", "maybe"]}))
            .unwrap_err();
        assert_eq!(nested.field.as_deref(), Some("status[1]"));
        let hello = ClientRequest::parse(
            "initialize",
            json!({"protocolVersion": 2, "clientName": "x", "roles": ["observer"], "future": 1}),
        );
        assert!(
            matches!(hello, Ok(ClientRequest::Initialize(_))),
            "{hello:?}"
        );
    }

    #[test]
    fn absent_and_null_are_distinct() {
        let absent = ClientRequest::parse("sessions.configure", json!({"sessionId": "s"}));
        let null = ClientRequest::parse(
            "sessions.configure",
            json!({"sessionId": "s", "shellId": null}),
        );
        match (absent, null) {
            (Ok(ClientRequest::SessionsConfigure(a)), Ok(ClientRequest::SessionsConfigure(n))) => {
                assert_eq!(a.shell_id, None);
                assert_eq!(n.shell_id, Some(None));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_method_is_in_the_table_once_with_its_role() {
        let names: std::collections::HashSet<_> = METHODS.iter().map(|m| m.name).collect();
        assert_eq!(names.len(), METHODS.len());
        assert_eq!(
            method("plans.resolve").map(|m| m.access),
            Some(Access::Approver)
        );
        assert_eq!(
            method("tools.execute").map(|m| m.access),
            Some(Access::Agent)
        );
        assert_eq!(method("plans.list").map(|m| m.access), Some(Access::Any));
        assert!(method("plans.pending").is_none());
    }
}

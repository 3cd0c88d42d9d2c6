//! The one registry of stable codes. Every refusal, failure and recorded reason planhost reports
//! carries one of these: on the wire as its string, in Rust as an [`ErrorCode`]. A typo cannot
//! compile, and the table in `docs/protocol.md` is generated from this list.

/// How a code reaches a client: which JSON-RPC error it travels in, or that it is only ever a
/// recorded reason (an approval's `errorCode`, a capture's reason) and never an error.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CodeClass {
    /// `-32700`: the line is not JSON.
    Parse,
    /// `-32600`: not a request object, or a line over the limit.
    InvalidRequest,
    /// `-32601`: no such method.
    MethodNotFound,
    /// `-32602`: the params do not match the method.
    InvalidParams,
    /// `-32603`: a fault of the host itself.
    Internal,
    /// `-32000`: planhost refused the request; nothing changed.
    Refused,
    /// `-32001`: the client and the host speak different protocol versions.
    Version,
    /// `-32002`: a request arrived before `initialize`.
    NotInitialized,
    /// `-32003`: the change could not be persisted; nothing was granted.
    Persistence,
    /// `-32004`: the connection's roles do not allow the method; nothing changed.
    Forbidden,
    /// Never an error on the wire: a reason recorded on a row or returned in a result.
    Reason,
    /// Produced by a client library, never by the host (for example: no host answers).
    Client,
}

impl CodeClass {
    /// The JSON-RPC numeric code of an error of this class; `None` for reasons and client codes.
    pub fn numeric(self) -> Option<i64> {
        match self {
            CodeClass::Parse => Some(-32700),
            CodeClass::InvalidRequest => Some(-32600),
            CodeClass::MethodNotFound => Some(-32601),
            CodeClass::InvalidParams => Some(-32602),
            CodeClass::Internal => Some(-32603),
            CodeClass::Refused => Some(-32000),
            CodeClass::Version => Some(-32001),
            CodeClass::NotInitialized => Some(-32002),
            CodeClass::Persistence => Some(-32003),
            CodeClass::Forbidden => Some(-32004),
            CodeClass::Reason | CodeClass::Client => None,
        }
    }
}

macro_rules! error_codes {
    ($($variant:ident = $text:literal, $class:ident, $doc:literal;)+) => {
        /// A stable code: the string a client matches on, paired with its class.
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        pub enum ErrorCode {
            $(#[doc = $doc] #[serde(rename = $text)] $variant,)+
        }

        impl ErrorCode {
            /// Every code, in registry order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),+];

            /// The stable wire string.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $text,)+
                }
            }

            /// How the code reaches a client.
            pub fn class(self) -> CodeClass {
                match self {
                    $(ErrorCode::$variant => CodeClass::$class,)+
                }
            }

            /// One sentence on what the code means.
            pub fn doc(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $doc,)+
                }
            }
        }

        impl std::str::FromStr for ErrorCode {
            type Err = crate::UnknownValue;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok(ErrorCode::$variant),)+
                    other => Err(crate::UnknownValue { kind: "ErrorCode", value: other.to_owned() }),
                }
            }
        }
    };
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

error_codes! {
    // The protocol itself.
    ParseError = "PARSE_ERROR", Parse, "The line is not valid JSON (the id is echoed when it can still be read).";
    InvalidRequest = "INVALID_REQUEST", InvalidRequest, "The line is JSON but not a JSON-RPC 2.0 request object.";
    LineTooLong = "LINE_TOO_LONG", InvalidRequest, "The line is longer than 16 MiB; it was discarded and the connection goes on.";
    InputBufferFull = "INPUT_BUFFER_FULL", InvalidRequest, "The host already buffers its limit of unfinished lines across all connections (64 MiB by default); this line was discarded and the connection goes on: send it again.";
    TooManyConnections = "TOO_MANY_CONNECTIONS", Refused, "The host serves its limit of connections (512 by default), or all but the ones it keeps for processes that hold no connection yet (64) while this process already holds one, or it has no file descriptor left; this connection is closed at once. Close another client, or try again shortly.";
    TooManyProcessConnections = "TOO_MANY_PROCESS_CONNECTIONS", Refused, "The connecting process (by its pid and start time) already holds its limit of connections (128 by default); this one is closed at once and the process's other connections go on. Close one of them: a client needs one, or a few.";
    InitializeTimeout = "INITIALIZE_TIMEOUT", Refused, "The connection did not complete `initialize` within 5 s of being accepted; it is closed and its slot freed. A client sends `initialize` first, as soon as it connects.";
    MethodNotFound = "METHOD_NOT_FOUND", MethodNotFound, "No method has that name.";
    InvalidParams = "INVALID_PARAMS", InvalidParams, "The params do not match the method; `data.field` names the offending field.";
    InternalError = "INTERNAL_ERROR", Internal, "A fault inside planhost; nothing was granted.";
    HostStopped = "HOST_STOPPED", Internal, "The host is shutting down or its state thread stopped; the call did not run.";
    ProtocolVersionMismatch = "PROTOCOL_VERSION_MISMATCH", Version, "The client speaks another protocol version; the message names both.";
    NotInitialized = "NOT_INITIALIZED", NotInitialized, "A request arrived before `initialize`.";
    AlreadyInitialized = "ALREADY_INITIALIZED", Refused, "`initialize` was sent twice on one connection.";
    RolesInvalid = "ROLES_INVALID", InvalidParams, "`initialize` declared no role.";
    AgentProcessInvalid = "AGENT_PROCESS_INVALID", Refused, "`initialize`'s `agentProcess` is not the connecting process, its parent or its grandparent, or came without the agent role.";
    RoleForbidden = "ROLE_FORBIDDEN", Forbidden, "The connection's roles do not allow this method (for example resolving without `approver`).";
    RoleApproverRefused = "ROLE_APPROVER_REFUSED", Forbidden, "`initialize` declared `approver` from a process that runs under an agent (a run of this host, or a child of a process with an `agent` connection): a model cannot approve its own plan.";
    // Storage.
    StorePersistenceFailed = "STORE_PERSISTENCE_FAILED", Persistence, "SQLite could not commit the change; nothing was granted.";
    StoreCorrupt = "STORE_CORRUPT", Internal, "A stored row or body failed its checks; it is reported, never used.";
    StoreSchemaTooNew = "STORE_SCHEMA_TOO_NEW", Refused, "The database was written by a newer planhost; it is left untouched.";
    StoreMigrationFailed = "STORE_MIGRATION_FAILED", Refused, "A migration step failed; the older schema stays authoritative.";
    StoreBackupFailed = "STORE_BACKUP_FAILED", Persistence, "The pre-migration backup could not be written; nothing was migrated.";
    SettingsInvalid = "SETTINGS_INVALID", Refused, "A setting value is not one the host accepts.";
    // Sessions and turns.
    SessionNotFound = "SESSION_NOT_FOUND", Refused, "No session has that id.";
    SessionBusy = "SESSION_BUSY", Refused, "A turn, a pending approval or a live execution blocks a new turn.";
    SessionNotIdle = "SESSION_NOT_IDLE", Refused, "Mode and configuration change only while the session is idle.";
    SessionWorkspaceMismatch = "SESSION_WORKSPACE_MISMATCH", Refused, "The external id is already open for another workspace root.";
    SessionAgentMismatch = "SESSION_AGENT_MISMATCH", Refused, "The external id is already open for another agent: a session's agent never changes.";
    WorkspaceInvalid = "WORKSPACE_INVALID", Refused, "The workspace root is not an absolute, existing directory.";
    TurnNotFound = "TURN_NOT_FOUND", Refused, "No turn has that id.";
    TurnNotActive = "TURN_NOT_ACTIVE", Refused, "The named turn is not the session's running turn.";
    TurnOriginInvalid = "TURN_ORIGIN_INVALID", Refused, "Not allowed for a turn of this origin (execution turns start with `executions.claim`).";
    ToolNotAloneInBatch = "TOOL_NOT_ALONE_IN_BATCH", Refused, "EnterPlanMode and SubmitPlan must be the only call in their assistant batch.";
    IdAmbiguous = "ID_AMBIGUOUS", Refused, "An id prefix matches more than one record; the message lists them.";
    // Plans and approvals (seed 000).
    PlanRequiresInteractiveSession = "PLAN_REQUIRES_INTERACTIVE_SESSION", Refused, "Plan work needs an interactive session with a person to approve.";
    PlanModeNotActive = "PLAN_MODE_NOT_ACTIVE", Refused, "The session is not in Plan mode.";
    PlanApprovalAlreadyPending = "PLAN_APPROVAL_ALREADY_PENDING", Refused, "The session already has a pending plan approval.";
    PlanTitleInvalid = "PLAN_TITLE_INVALID", Refused, "The plan title is empty or too long.";
    PlanQuestionInvalid = "PLAN_QUESTION_INVALID", Refused, "The plan question is too long.";
    PlanMarkdownInvalid = "PLAN_MARKDOWN_INVALID", Refused, "The plan Markdown is empty or larger than 4 MiB.";
    PlanApprovalNotFound = "PLAN_APPROVAL_NOT_FOUND", Refused, "No plan approval has that id.";
    PlanApprovalStale = "PLAN_APPROVAL_STALE", Refused, "The request's session, turn, tool call, version or digest does not match the approval.";
    PlanApprovalNotPending = "PLAN_APPROVAL_NOT_PENDING", Refused, "The approval was already answered, expired or interrupted.";
    PlanResolveInvalid = "PLAN_RESOLVE_INVALID", Refused, "The resolve request contradicts itself (a reject with a permission mode).";
    PlanApprovalTimeout = "PLAN_APPROVAL_TIMEOUT", Refused, "The approval's absolute 30-minute deadline passed; it is now expired.";
    PlanArtifactPathInvalid = "PLAN_ARTIFACT_PATH_INVALID", Refused, "The plan file's path is not valid; no approval was created.";
    PlanArtifactSymlink = "PLAN_ARTIFACT_SYMLINK", Refused, "A symlink sits where the plan file or its directory goes; no approval was created.";
    PlanArtifactCollision = "PLAN_ARTIFACT_COLLISION", Refused, "A file already has the plan file's unique name; no approval was created.";
    PlanArtifactWriteFailed = "PLAN_ARTIFACT_WRITE_FAILED", Refused, "The plan file could not be written; no approval was created.";
    PlanArtifactChanged = "PLAN_ARTIFACT_CHANGED", Refused, "The plan file on disk no longer holds the submitted bytes; it cannot be approved.";
    ExecutionNotFound = "EXECUTION_NOT_FOUND", Refused, "No execution has that id in this session.";
    ExecutionStateInvalid = "EXECUTION_STATE_INVALID", Refused, "The execution's state does not allow this step.";
    HostRestarted = "HOST_RESTARTED", Reason, "Work that was pending, queued or running when the host stopped; interrupted, never replayed.";
    TurnAborted = "TURN_ABORTED", Reason, "Work interrupted because its turn was aborted.";
    // Checkpoints, capture and publication (seeds 003 and 004).
    CheckpointRevisionStale = "CHECKPOINT_REVISION_STALE", Refused, "`expectedRevision` is not the branch's current revision; the message names it.";
    CheckpointBranchInvalid = "CHECKPOINT_BRANCH_INVALID", Refused, "The branch path is empty or has an empty entry id.";
    CheckpointNone = "CHECKPOINT_NONE", Refused, "The branch has no plan checkpoint yet.";
    CheckpointNotFound = "CHECKPOINT_NOT_FOUND", Refused, "The session has no checkpoint with this id, or its bytes have another SHA-256.";
    CheckpointChanged = "CHECKPOINT_CHANGED", Reason, "A publication approval was revoked because a newer checkpoint arrived.";
    CaptureEntryChanged = "CAPTURE_ENTRY_CHANGED", Refused, "The same transcript entry was offered again with other content.";
    CaptureNotEligible = "CAPTURE_NOT_ELIGIBLE", Reason, "The message may not be captured (not begun in planning, not a final stop, or it has tool calls).";
    CaptureNoPlan = "CAPTURE_NO_PLAN", Reason, "The message holds no `<proposed_plan>` block.";
    CaptureNestedDelimiter = "CAPTURE_NESTED_DELIMITER", Reason, "A `<proposed_plan>` line inside an open block.";
    CaptureDuplicateDelimiter = "CAPTURE_DUPLICATE_DELIMITER", Reason, "A second `<proposed_plan>` block in one message.";
    CaptureStrayDelimiter = "CAPTURE_STRAY_DELIMITER", Reason, "A `</proposed_plan>` line with no open block.";
    CaptureIncomplete = "CAPTURE_INCOMPLETE", Reason, "A `<proposed_plan>` block that never closes.";
    CaptureSpansBlocks = "CAPTURE_SPANS_BLOCKS", Reason, "A block that spans two content blocks.";
    CaptureEmpty = "CAPTURE_EMPTY", Reason, "A `<proposed_plan>` block with nothing in it.";
    CaptureTooLarge = "CAPTURE_TOO_LARGE", Reason, "A captured plan larger than 4 MiB.";
    PublicationNotFound = "PUBLICATION_NOT_FOUND", Refused, "No publication approval has that id.";
    PublicationPending = "PUBLICATION_PENDING", Refused, "The session already has a pending publication approval.";
    PublicationStateInvalid = "PUBLICATION_STATE_INVALID", Refused, "The publication's status does not allow this step.";
    PublishConflict = "PUBLISH_CONFLICT", Refused, "The published file changed outside planhost; it is never overwritten without a person's choice.";
    PublishCollision = "PUBLISH_COLLISION", Refused, "The first publication's name was taken meanwhile; a new name is asked for.";
    PublishSymlink = "PUBLISH_SYMLINK", Refused, "A symlink sits on the publication path.";
    PublishNotDirectory = "PUBLISH_NOT_DIRECTORY", Refused, "`.pi` or `.pi/plans` is not a directory.";
    PublishPathInvalid = "PUBLISH_PATH_INVALID", Refused, "The publication path is not valid.";
    PublishWriteFailed = "PUBLISH_WRITE_FAILED", Refused, "The published file could not be written.";
    BranchSwitched = "BRANCH_SWITCHED", Reason, "An approval cleared because the client moved to another branch.";
    PlanExited = "PLAN_EXITED", Reason, "A publication approval revoked because the session left Plan mode.";
    PlanCommandInvalid = "PLAN_COMMAND_INVALID", Reason, "A `/plan` argument the grammar does not accept; the help is shown.";
    PlanHandoffPhaseInvalid = "PLAN_HANDOFF_PHASE_INVALID", Refused, "The handoff's phase does not allow this step.";
    PlanHandoffStale = "PLAN_HANDOFF_STALE", Refused, "The handoff token is not this host's, or a restart voided it (retry first).";
    PlanToolsConflict = "PLAN_TOOLS_CONFLICT", Refused, "The active tool set changed outside planhost; approval waits until it is resolved.";
    // Tool policy (a `tools.authorize` deny carries one of these; `tools.execute` refuses with it).
    PolicyBatchInvalid = "POLICY_BATCH_INVALID", Refused, "The batch position is malformed.";
    PolicyPlanWriteDenied = "POLICY_PLAN_WRITE_DENIED", Refused, "Plan mode denies file writers whatever the permission mode.";
    PolicyPlanShellDenied = "POLICY_PLAN_SHELL_DENIED", Refused, "The strict preset denies the shell in Plan mode.";
    PolicyPluginDenied = "POLICY_PLUGIN_DENIED", Refused, "Plan mode denies this extension tool.";
    PolicyProvenanceMismatch = "POLICY_PROVENANCE_MISMATCH", Refused, "The tool's claimed provenance does not hold.";
    PolicyUnknownTool = "POLICY_UNKNOWN_TOOL", Refused, "A built-in claim for a name outside the host's catalog.";
    PolicyToolNotAloneInBatch = "POLICY_TOOL_NOT_ALONE_IN_BATCH", Refused, "EnterPlanMode and SubmitPlan must be alone in their batch.";
    PolicyPlanModeNotActive = "POLICY_PLAN_MODE_NOT_ACTIVE", Refused, "A planning tool outside Plan mode.";
    PolicyPublicationCommandOnly = "POLICY_PUBLICATION_COMMAND_ONLY", Refused, "Publication goes through `/plan save`, never a model tool.";
    PolicyStrictToolDenied = "POLICY_STRICT_TOOL_DENIED", Refused, "The strict preset does not expose this built-in in Plan mode.";
    PolicyPlanToolDenied = "POLICY_PLAN_TOOL_DENIED", Refused, "Plan mode denies this built-in of the agent (a web tool, or one acting through an outside service).";
    PolicyMcpDenied = "POLICY_MCP_DENIED", Refused, "Plan mode denies this MCP tool: the preset admits none by that server and name.";
    PolicyPlanApprovalSurface = "POLICY_PLAN_APPROVAL_SURFACE", Refused, "In Plan mode a command that reaches planhost's approval surfaces (its binary, socket, database, web token or page) is denied: it would answer a plan.";
    PolicyScopeEscape = "POLICY_SCOPE_ESCAPE", Refused, "A command that starts processes outside planhost's reach (`systemd-run`, `at`, `crontab`, a terminal multiplexer, `ssh`): denied in Plan mode.";
    // Tool calls.
    ToolNotAuthorized = "TOOL_NOT_AUTHORIZED", Refused, "No grant for this call, tool, input and turn (or the policy now asks first).";
    ToolCallRunning = "TOOL_CALL_RUNNING", Refused, "The tool call is already running.";
    ToolUnknown = "TOOL_UNKNOWN", Refused, "The host runs Read, Glob, Grep, Write, Edit and Bash only.";
    ToolInvalidInput = "TOOL_INVALID_INPUT", Refused, "The tool input does not match the tool.";
    ToolPathOutsideWorkspace = "TOOL_PATH_OUTSIDE_WORKSPACE", Refused, "The path leads outside the workspace.";
    ToolPathNotFound = "TOOL_PATH_NOT_FOUND", Refused, "The path does not exist.";
    ToolPathIsDirectory = "TOOL_PATH_IS_DIRECTORY", Refused, "The path is a directory.";
    ToolPathReserved = "TOOL_PATH_RESERVED", Refused, "`.pi/plan` and `.pi/plans` belong to the host.";
    ToolSymlinkRefused = "TOOL_SYMLINK_REFUSED", Refused, "Writes never go through a symlink.";
    ToolBinaryFile = "TOOL_BINARY_FILE", Refused, "The file is not text.";
    ToolFileTooLarge = "TOOL_FILE_TOO_LARGE", Refused, "The file is larger than the tool reads.";
    ToolInvalidRegex = "TOOL_INVALID_REGEX", Refused, "The Grep pattern is not a valid regex.";
    ToolInvalidGlob = "TOOL_INVALID_GLOB", Refused, "The Glob pattern is not valid.";
    ToolNonUtf8Path = "TOOL_NON_UTF8_PATH", Refused, "A path that is not UTF-8.";
    ToolEditNoMatch = "TOOL_EDIT_NO_MATCH", Refused, "Edit's old text is not in the file.";
    ToolEditNotUnique = "TOOL_EDIT_NOT_UNIQUE", Refused, "Edit's old text occurs more than once.";
    ToolFileChanged = "TOOL_FILE_CHANGED", Refused, "The file was replaced while Edit worked on it; nothing was written.";
    ToolReadFailed = "TOOL_READ_FAILED", Refused, "The file could not be read.";
    ToolWriteFailed = "TOOL_WRITE_FAILED", Refused, "The file could not be written.";
    ToolInternalError = "TOOL_INTERNAL_ERROR", Internal, "The tool failed inside the host.";
    PermissionNotFound = "PERMISSION_NOT_FOUND", Refused, "No open ask has that id.";
    PermissionAlreadyResolved = "PERMISSION_ALREADY_RESOLVED", Refused, "The ask was already answered.";
    PermissionDecisionInvalid = "PERMISSION_DECISION_INVALID", Refused, "An ask is answered allow or deny.";
    PermissionDenied = "PERMISSION_DENIED", Refused, "A person answered no to this call's ask.";
    PermissionNoPerson = "PERMISSION_NO_PERSON", Refused, "The policy would ask a person first, and nobody can answer here (the agent runs without one, or has no way to ask): refused, never left to run.";
    // The shell.
    CommandShellInvalid = "COMMAND_SHELL_INVALID", Refused, "Not a shell of this platform's catalog, or not available.";
    CommandShellChanged = "COMMAND_SHELL_CHANGED", Refused, "The shell no longer matches the one the turn pinned.";
    ShellNotFound = "SHELL_NOT_FOUND", Refused, "No shell of the catalog is available.";
    CommandTimeoutInvalid = "COMMAND_TIMEOUT_INVALID", Refused, "An explicit timeout must be 1,000..=300,000 ms.";
    CommandCwdInvalid = "COMMAND_CWD_INVALID", Refused, "The command's working directory is not valid.";
    CommandEnvInvalid = "COMMAND_ENV_INVALID", Refused, "The command's environment is not valid.";
    CommandSpawnFailed = "COMMAND_SPAWN_FAILED", Refused, "The shell could not be started.";
    CommandWaitFailed = "COMMAND_WAIT_FAILED", Internal, "Waiting for the command failed.";
    // Files below the tools (the fs crate's own codes; tools and publication map them).
    FsInvalidName = "FS_INVALID_NAME", Refused, "A file name the workspace layer refuses.";
    FsPathInvalid = "FS_PATH_INVALID", Refused, "A path the workspace layer refuses.";
    FsNotFound = "FS_NOT_FOUND", Refused, "The path does not exist.";
    FsSymlink = "FS_SYMLINK", Refused, "A symlink where none is allowed.";
    FsNotDirectory = "FS_NOT_DIRECTORY", Refused, "Not a directory.";
    FsIsDirectory = "FS_IS_DIRECTORY", Refused, "A directory where a file is expected.";
    FsNotRegularFile = "FS_NOT_REGULAR_FILE", Refused, "Not a regular file.";
    FsAlreadyExists = "FS_ALREADY_EXISTS", Refused, "The name is taken.";
    FsOutsideWorkspace = "FS_OUTSIDE_WORKSPACE", Refused, "The path leads outside the workspace.";
    FsSymlinkEscape = "FS_SYMLINK_ESCAPE", Refused, "A symlink leads outside the workspace.";
    FsNonUtf8Path = "FS_NON_UTF8_PATH", Refused, "A path that is not UTF-8.";
    FsIo = "FS_IO", Refused, "An I/O error in the workspace layer.";
    // Client libraries.
    HostUnreachable = "HOST_UNREACHABLE", Client, "No host answers on the socket, or the connection dropped: treat it as a deny.";
    HostBinaryNotFound = "HOST_BINARY_NOT_FOUND", Client, "No host answers and there is no planhost binary to start one (`PLANHOST_BIN`, or `planhost` on `PATH`).";
    HostStartFailed = "HOST_START_FAILED", Client, "The planhost the client started exited before it answered; its exit status and `planhost doctor` say why.";
    MalformedMessage = "MALFORMED_MESSAGE", Client, "The host sent a message the client could not decode.";
    WebNotServed = "WEB_NOT_SERVED", Refused, "This host serves no web page (start it with `planhost serve --web`), so there is no token to rotate.";
    WebUnauthorized = "WEB_UNAUTHORIZED", Client, "The web page's access ended (its token was rotated, or the host restarted with a new one): nothing was done; open the address `planhost web` prints.";
    WebNotFound = "WEB_NOT_FOUND", Client, "What the web page answered is no longer there (it ended meanwhile): nothing was done.";
    WebFailed = "WEB_FAILED", Client, "The web page could not take the answer, for a reason it shows: nothing was done.";
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::str::FromStr;

    #[test]
    fn every_code_is_unique_upper_snake_and_round_trips() {
        let mut seen = HashSet::new();
        for code in ErrorCode::ALL {
            let text = code.as_str();
            assert!(seen.insert(text), "{text} twice");
            assert!(
                text.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'),
                "{text}"
            );
            assert_eq!(ErrorCode::from_str(text), Ok(*code));
            assert!(code.doc().ends_with('.'), "{text} doc");
        }
        assert!(ErrorCode::from_str("NOPE").is_err());
    }

    #[test]
    fn errors_have_numbers_and_reasons_do_not() {
        assert_eq!(
            ErrorCode::PlanApprovalTimeout.class().numeric(),
            Some(-32000)
        );
        assert_eq!(ErrorCode::RoleForbidden.class().numeric(), Some(-32004));
        assert_eq!(ErrorCode::HostRestarted.class().numeric(), None);
    }
}

//! `tools.authorize` classifies a tool name with the catalog of the agent its session serves:
//! the same name means what that agent means by it, the command line is taken from where that
//! agent puts it, and a session's agent never changes.

use std::sync::Arc;

use planhost_core::{Agent, DenyCode, Interactivity, ManualClock, Mode, Role, SessionId, TurnId};
use planhost_protocol::{
    AuthorizeParams, BeginTurnParams, DecisionKind, InitializeParams, OpenSessionParams,
    PROTOCOL_VERSION, Provenance, SetModeParams, methods,
};
use serde_json::{Value, json};

use super::fixture::T0;
use crate::{Connection, Service, ServiceConfig};

async fn planning(
    conn: &Connection,
    workspace: &std::path::Path,
    external: &str,
    agent: Option<Agent>,
) -> (SessionId, TurnId) {
    let session = conn
        .call::<methods::SessionsOpen>(OpenSessionParams {
            workspace_root: workspace.display().to_string(),
            external_id: Some(external.into()),
            interactivity: Interactivity::Interactive,
            persistence: None,
            agent,
        })
        .await
        .unwrap();
    assert_eq!(session.agent, agent.unwrap_or(Agent::Pi));
    conn.call::<methods::SessionsSetMode>(SetModeParams {
        session_id: session.id.clone(),
        mode: Mode::Plan,
    })
    .await
    .unwrap();
    let turn = conn
        .call::<methods::TurnsBegin>(BeginTurnParams {
            session_id: session.id.clone(),
            origin: None,
        })
        .await
        .unwrap();
    (session.id, turn.id)
}

/// The decision as "allow", "ask" or the deny code.
async fn decide(conn: &Connection, at: &(SessionId, TurnId), tool: &str, input: Value) -> String {
    let call = format!("call-{tool}-{}", input.to_string().len());
    let result = conn
        .call::<methods::ToolsAuthorize>(AuthorizeParams {
            session_id: at.0.clone(),
            turn_id: at.1.clone(),
            tool_call_id: call.into(),
            tool_name: tool.into(),
            batch_index: 0,
            batch_size: 1,
            provenance: Provenance::built_in(),
            input,
        })
        .await
        .unwrap();
    match result.decision {
        DecisionKind::Allow => "allow".into(),
        DecisionKind::Ask => "ask".into(),
        DecisionKind::Deny => result.code.map_or("deny", DenyCode::as_str).into(),
    }
}

#[test]
fn each_session_is_held_to_its_agents_catalog() {
    super::fixture::block_on(async {
        let state = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let config = ServiceConfig {
            clock: Arc::new(ManualClock::new(T0)),
            ..ServiceConfig::new(state.path())
        };
        let service = Service::start(config).unwrap().service;
        let hello = InitializeParams {
            protocol_version: PROTOCOL_VERSION,
            client_name: "agents-test".into(),
            client_version: None,
            roles: vec![Role::Agent, Role::Approver],
            tool_activity: false,
            events: planhost_protocol::EventScope::All,
            agent_process: None,
        };
        let (conn, _notes, _) = service.connect(&hello, crate::Peer::Embedded).unwrap();
        let root = workspace.path();

        let claude = planning(&conn, root, "claude-1", Some(Agent::ClaudeCode)).await;
        let write = json!({ "file_path": "a", "edits": [] });
        assert_eq!(
            decide(&conn, &claude, "MultiEdit", write).await,
            "POLICY_PLAN_WRITE_DENIED"
        );
        assert_eq!(
            decide(&conn, &claude, "Bash", json!({ "command": "ls" })).await,
            "allow"
        );
        let rm = json!({ "command": "rm -rf build" });
        assert_eq!(decide(&conn, &claude, "Bash", rm).await, "ask");
        assert_eq!(
            decide(&conn, &claude, "TodoWrite", json!({})).await,
            "allow"
        );
        assert_eq!(decide(&conn, &claude, "Task", json!({})).await, "ask");
        let mcp = decide(&conn, &claude, "mcp__github__create_issue", json!({})).await;
        assert_eq!(mcp, "POLICY_MCP_DENIED");
        // pi's names are nothing Claude Code has.
        assert_eq!(
            decide(&conn, &claude, "read", json!({})).await,
            "POLICY_UNKNOWN_TOOL"
        );

        // Codex's argv: the inner script of `bash -lc` is what is proven.
        let codex = planning(&conn, root, "codex-1", Some(Agent::Codex)).await;
        let argv = |s: &str| json!({ "command": ["bash", "-lc", s], "workdir": "." });
        assert_eq!(
            decide(&conn, &codex, "shell", argv("git status")).await,
            "allow"
        );
        assert_eq!(
            decide(&conn, &codex, "shell", argv("git status > out")).await,
            "ask"
        );
        assert_eq!(
            decide(&conn, &codex, "exec_command", json!({ "cmd": "ls" })).await,
            "allow"
        );
        let patch = json!({ "input": "*** Begin Patch" });
        assert_eq!(
            decide(&conn, &codex, "apply_patch", patch).await,
            "POLICY_PLAN_WRITE_DENIED"
        );
        assert_eq!(
            decide(&conn, &codex, "update_plan", json!({})).await,
            "allow"
        );

        let gemini = planning(&conn, root, "gemini-1", Some(Agent::GeminiCli)).await;
        let ls = json!({ "command": "ls" });
        assert_eq!(
            decide(&conn, &gemini, "run_shell_command", ls).await,
            "allow"
        );
        assert_eq!(
            decide(&conn, &gemini, "replace", json!({})).await,
            "POLICY_PLAN_WRITE_DENIED"
        );
        let web = decide(&conn, &gemini, "google_web_search", json!({})).await;
        assert_eq!(web, "POLICY_PLAN_TOOL_DENIED");

        // A client that names no agent is pi, as every client was before.
        let pi = planning(&conn, root, "pi-1", None).await;
        assert_eq!(
            decide(&conn, &pi, "read", json!({ "path": "a" })).await,
            "allow"
        );
        assert_eq!(
            decide(&conn, &pi, "MultiEdit", json!({})).await,
            "POLICY_PLAN_WRITE_DENIED"
        );
        assert_eq!(
            decide(&conn, &pi, "TodoWrite", json!({})).await,
            "POLICY_UNKNOWN_TOOL"
        );

        // A session's agent never changes.
        let err = conn
            .call::<methods::SessionsOpen>(OpenSessionParams {
                workspace_root: root.display().to_string(),
                external_id: Some("codex-1".into()),
                interactivity: Interactivity::Interactive,
                persistence: None,
                agent: Some(Agent::ClaudeCode),
            })
            .await
            .unwrap_err();
        assert_eq!(err.code().as_str(), "SESSION_AGENT_MISMATCH");
        service.shutdown();
    });
}

//! Roles over the real socket (protocol v2): a connection declares at `initialize` what it is.
//! Only an `approver` answers a person's questions — plan approvals, permission asks,
//! publications — or selects a mode; an `agent` or an `observer` that tries is refused with
//! `-32004 ROLE_FORBIDDEN` and nothing changes. Whoever answers is recorded by client and roles.

use planhost_core::{
    ApprovalAction, ApprovalStatus, AskId, AuditAction, EntryId, Interactivity, Mode,
    PermissionDecision, PermissionMode, PublicationStatus, Resolver, Role, SessionId,
    TargetPermissionMode, TurnId,
};
use planhost_protocol::{
    ApprovalInfo, ApprovalList, AskList, AskStatus, AsksFilter, AuditFilter, AuditLog,
    ConfigureParams, DecisionKind, Empty, ExecutionRef, Method, PlansFilter, ProposalRef,
    PublicationInfo, PublicationList, PublicationsFilter, RequestOutcome, RequestPublicationParams,
    ResolvePermissionParams, ResolvePlanParams, ResolvePublicationParams, SaveCheckpointParams,
    SessionList, SessionsFilter, Settings, codes, methods,
};
use planhost_test_support::host::params;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::steps::Steps as _;
use crate::support::*;

/// The methods only an approver may call, as the four refusals below exercise them.
const APPROVER_ONLY: [&str; 4] = [
    "plans.resolve",
    "permissions.resolve",
    "publications.resolve",
    "sessions.setMode",
];

/// The plan every submission here carries.
const PLAN: &str = "# Plan: e2e\n\n1. Write `out.txt`.\n2. Run Bash.\n";

/// SubmitPlan allowed and submitted in the running turn `turn`: the pending approval.
fn submit(c: &mut Conn, sid: &SessionId, turn: &TurnId, title: &str) -> ApprovalInfo {
    let allowed = c.call::<methods::ToolsAuthorize>(params::authorize(
        sid,
        turn,
        "submit-1",
        "SubmitPlan",
        json!({}),
    ));
    assert_eq!(allowed.decision, DecisionKind::Allow, "{allowed:?}");
    let approval =
        c.call::<methods::PlansSubmit>(params::submit(sid, turn, "submit-1", title, PLAN));
    assert_eq!(approval.status, ApprovalStatus::Pending, "{approval:?}");
    approval
}

/// `plans.resolve` approving exactly this approval with permission mode `mode`.
fn approve(approval: &ApprovalInfo, mode: TargetPermissionMode) -> ResolvePlanParams {
    ResolvePlanParams {
        target_permission_mode: Some(mode),
        ..params::resolve(approval, ApprovalAction::Approve)
    }
}

/// The audit log (newest first), of one session or of all.
fn audit(c: &mut Conn, session: Option<&SessionId>) -> AuditLog {
    c.call::<methods::AuditList>(AuditFilter {
        session_id: session.cloned(),
        limit: Some(10_000),
    })
}

/// Work waiting for a person: a pending plan approval, an open permission ask, a pending
/// publication, and an idle Agent session whose mode could be selected.
struct Waiting {
    approval: ApprovalInfo,
    ask: AskId,
    publication: PublicationInfo,
    idle: SessionId,
}

fn set_up(c: &mut Conn, env: &Env) -> Waiting {
    // A plan awaiting approval.
    let planning = c.open_session(&env.workspace(), Interactivity::Interactive);
    c.set_mode(&planning, Mode::Plan);
    let turn = c.begin_turn(&planning);
    let approval = submit(c, &planning, &turn, "Needs a person");
    c.end_turn(&planning, &turn);

    // An open ask: Bash under `ask`, in a turn that keeps running.
    let asking = c.open_session(&env.workspace(), Interactivity::Interactive);
    c.call::<methods::SessionsConfigure>(ConfigureParams {
        permission_mode: Some(PermissionMode::Ask),
        ..params::configure(&asking)
    });
    let turn = c.begin_turn(&asking);
    let input = json!({ "command": "touch asked.txt" });
    let ask = c.call::<methods::ToolsAuthorize>(params::authorize(
        &asking, &turn, "bash-1", "Bash", input,
    ));
    assert_eq!(ask.decision, DecisionKind::Ask, "{ask:?}");
    let ask = ask.request_id.expect("an ask has its id");

    // A pending publication of a checkpoint.
    let publishing = c.open_session(&env.workspace(), Interactivity::Interactive);
    c.set_mode(&publishing, Mode::Plan);
    let branch: Vec<EntryId> = vec!["root".into(), "p1".into()];
    c.call::<methods::CheckpointsSave>(SaveCheckpointParams {
        session_id: publishing.clone(),
        branch_path: branch.clone(),
        markdown: "# Plan: publish me\n".into(),
        expected_revision: 0,
    });
    let requested = c.call::<methods::PublicationsRequest>(RequestPublicationParams {
        session_id: publishing,
        branch_path: branch,
        overwrite_conflict: false,
    });
    assert_eq!(requested.outcome, RequestOutcome::Pending, "{requested:?}");
    let publication = requested.publication.expect("a pending publication");

    let idle = c.open_session(&env.workspace(), Interactivity::Interactive);
    Waiting {
        approval,
        ask,
        publication,
        idle,
    }
}

/// Everything a client can read back about the host's state.
#[derive(Debug, Clone, PartialEq)]
struct Everything {
    sessions: SessionList,
    plans: ApprovalList,
    asks: AskList,
    publications: PublicationList,
    audit: AuditLog,
    settings: Settings,
}

fn everything(c: &mut Conn) -> Everything {
    let all = Some(10_000);
    Everything {
        sessions: c.call::<methods::SessionsList>(SessionsFilter {
            include_ended: None,
            workspace_root: None,
            limit: all,
        }),
        plans: c.call::<methods::PlansList>(PlansFilter {
            session_id: None,
            status: None,
            limit: all,
        }),
        asks: c.call::<methods::PermissionsList>(AsksFilter {
            session_id: None,
            status: None,
            limit: all,
        }),
        publications: c.call::<methods::PublicationsList>(PublicationsFilter {
            session_id: None,
            status: None,
            limit: all,
        }),
        audit: audit(c, None),
        settings: c.call::<methods::SettingsGet>(Empty {}),
    }
}

/// The four approver calls, each naming exactly the waiting work. Raw by name: the table holds
/// every approver-only method side by side, as the wire sees them.
fn approver_calls(w: &Waiting) -> [(&'static str, Value); 4] {
    fn json(params: impl serde::Serialize) -> Value {
        serde_json::to_value(params).expect("params as JSON")
    }
    [
        (
            methods::PlansResolve::NAME,
            json(approve(&w.approval, TargetPermissionMode::Auto)),
        ),
        (
            methods::PermissionsResolve::NAME,
            json(ResolvePermissionParams {
                request_id: w.ask.clone(),
                decision: PermissionDecision::Allow,
                note: None,
            }),
        ),
        (
            methods::PublicationsResolve::NAME,
            json(ResolvePublicationParams {
                publication_id: w.publication.publication_id.clone(),
                action: ApprovalAction::Approve,
            }),
        ),
        (
            methods::SessionsSetMode::NAME,
            json(params::set_mode(&w.idle, Mode::Plan)),
        ),
    ]
}

#[test]
fn agents_and_observers_cannot_answer_for_a_person() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut setup = host.connect("e2e-setup");
    let waiting = set_up(&mut setup, &env);
    // Tool audit rows are written asynchronously: wait for them before taking the baseline.
    let before = poll_until("the tool audit rows", BOUND, || {
        let state = everything(&mut setup);
        let tool_rows = state
            .audit
            .items
            .iter()
            .filter(|e| matches!(e.action, AuditAction::ToolAllow | AuditAction::ToolAsk))
            .count();
        (tool_rows == 2).then_some(state)
    });

    for (name, roles) in [
        ("e2e-observer", &[Role::Observer][..]),
        ("e2e-agent-only", &[Role::Agent][..]),
    ] {
        let mut c = host.connect_as(name, roles);
        for (method, params) in approver_calls(&waiting) {
            let e = c.call_json_err(method, params);
            assert_code(&e, codes::FORBIDDEN, "ROLE_FORBIDDEN");
            assert!(e.message.contains(method), "{name}: {e:?}");
        }
        // Reads stay open to every role.
        let plans = c.call::<methods::PlansList>(PlansFilter {
            session_id: None,
            status: None,
            limit: None,
        });
        assert_eq!(plans.items.len(), 1, "{name}");
        assert_eq!(
            everything(&mut c),
            before,
            "{name} changed the host's state"
        );
    }

    // Read back: the approval is still pending at the same version, nobody answered anything.
    let detail = setup.call::<methods::PlansGet>(ProposalRef {
        proposal_id: waiting.approval.proposal_id.clone(),
    });
    let approval = &detail.approval;
    assert_eq!(approval.status, ApprovalStatus::Pending, "{approval:?}");
    assert_eq!(approval.version, waiting.approval.version, "{approval:?}");
    assert_eq!(approval.resolved_by, None, "{approval:?}");
    assert_eq!(approval.execution_id, None, "{approval:?}");
    assert!(detail.artifact_intact);
    let asks = setup
        .call::<methods::PermissionsList>(AsksFilter {
            session_id: None,
            status: Some(vec![AskStatus::Open]),
            limit: None,
        })
        .items;
    assert_eq!(asks.len(), 1, "{asks:?}");
    assert_eq!(asks[0].request_id, waiting.ask);
    assert_eq!(asks[0].decision, None);
    let publications = setup
        .call::<methods::PublicationsList>(PublicationsFilter {
            session_id: None,
            status: Some(vec![PublicationStatus::Pending]),
            limit: None,
        })
        .items;
    assert_eq!(publications.len(), 1, "{publications:?}");
    assert_eq!(
        publications[0].publication_id,
        waiting.publication.publication_id
    );
    assert_eq!(publications[0].resolved_by, None);
    let published = env.workspace().join(&waiting.publication.relative_path);
    assert!(!published.exists(), "{} was written", published.display());
    let mode_of =
        |c: &mut Conn, sid: &SessionId| c.call::<methods::SessionsGet>(params::session(sid)).mode;
    assert_eq!(mode_of(&mut setup, &waiting.idle), Mode::Agent);
    assert_eq!(everything(&mut setup), before);

    // The very same calls from an approver go through: only the role stood in the way.
    let mut person = host.connect_as("e2e-person", &[Role::Approver]);
    for (method, params) in approver_calls(&waiting) {
        person.call_json(method, params);
    }
    assert_eq!(mode_of(&mut setup, &waiting.idle), Mode::Plan);
    assert!(published.exists());
}

#[test]
fn the_handshake_lists_each_methods_role_rule() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut c = host.connect_raw();
    let hello = c.initialize_as("e2e-observer", &[Role::Observer]);
    let access = |name: &str| {
        hello
            .methods
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("{name} not listed"))
            .access
            .as_str()
    };
    for method in APPROVER_ONLY {
        assert_eq!(access(method), "approver", "{method}");
    }
    for method in [
        "sessions.open",
        "turns.begin",
        "tools.execute",
        "plans.submit",
    ] {
        assert_eq!(access(method), "agent", "{method}");
    }
    for method in ["plans.list", "plans.get", "audit.list", "sessions.get"] {
        assert_eq!(access(method), "any", "{method}");
    }
    // An observer cannot act as the agent either.
    let e = c.call_err::<methods::SessionsOpen>(params::open_as(
        &env.workspace(),
        Interactivity::Interactive,
    ));
    assert_code(&e, codes::FORBIDDEN, "ROLE_FORBIDDEN");
    let sessions = c.call::<methods::SessionsList>(SessionsFilter {
        include_ended: None,
        workspace_root: None,
        limit: None,
    });
    assert!(sessions.items.is_empty());
}

#[test]
fn who_answered_is_recorded_by_client_and_roles() {
    let env = home();
    let host = SocketHost::start(&env);
    let mut agent = host.connect_as("e2e-agent", &[Role::Agent]);
    let mut web = host.connect_as("web-approver", &[Role::Approver, Role::Observer]);
    // Where it came from is what the kernel says of this process: a terminal, or a client
    // without one.
    let stat = fs_err::read_to_string("/proc/self/stat").unwrap();
    let tty: i64 = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .nth(4)
        .unwrap()
        .parse()
        .unwrap();
    let via = if tty == 0 {
        planhost_core::AnswerSurface::Client
    } else {
        planhost_core::AnswerSurface::Terminal
    };
    let by = Resolver {
        client: "web-approver".into(),
        roles: vec![Role::Approver, Role::Observer],
        via: Some(via),
    };
    // Events and audit details are untyped JSON: compared with the resolver as JSON.
    let by_json =
        json!({ "client": "web-approver", "roles": ["approver", "observer"], "via": via });

    let sid = agent.open_session(&env.workspace(), Interactivity::Interactive);
    web.set_mode(&sid, Mode::Plan);
    let turn = agent.begin_turn(&sid);
    let approval = submit(&mut agent, &sid, &turn, "Recorded");
    agent.end_turn(&sid, &turn);
    assert_eq!(approval.resolved_by, None, "{approval:?}");

    let approved =
        web.call::<methods::PlansResolve>(approve(&approval, TargetPermissionMode::AcceptEdits));
    assert_eq!(approved.status, ApprovalStatus::Approved, "{approved:?}");
    assert_eq!(approved.resolved_by.as_ref(), Some(&by), "{approved:?}");

    // On the approval as anyone reads it back, and on its event.
    let detail = agent.call::<methods::PlansGet>(ProposalRef {
        proposal_id: approval.proposal_id.clone(),
    });
    assert_eq!(detail.approval.status, ApprovalStatus::Approved);
    assert_eq!(
        detail.approval.resolved_by.as_ref(),
        Some(&by),
        "{detail:?}"
    );
    let event = agent.wait_event("approvalChanged approved", sid.as_str(), |e| {
        e["kind"] == "approvalChanged" && e["status"] == "approved"
    });
    assert_eq!(event["resolvedBy"], by_json, "{event}");

    // And in the audit log: the approval.approved row names who approved.
    let log = audit(&mut web, Some(&sid));
    let rows: Vec<_> = log
        .items
        .iter()
        .filter(|e| e.action == AuditAction::ApprovalApproved)
        .collect();
    assert_eq!(rows.len(), 1, "{log:?}");
    assert_eq!(rows[0].proposal_id.as_ref(), Some(&approval.proposal_id));
    assert_eq!(rows[0].detail["by"], by_json, "{:?}", rows[0]);
    assert_eq!(rows[0].detail["targetPermissionMode"], "accept-edits");

    // A permission ask answered by the same surface records it the same way.
    let claimed = agent.call::<methods::ExecutionsClaim>(ExecutionRef {
        session_id: sid.clone(),
        execution_id: approved.execution_id.clone().expect("an execution"),
    });
    let et = claimed.turn.id;
    let ask = agent.call::<methods::ToolsAuthorize>(params::authorize(
        &sid,
        &et,
        "bash-1",
        "Bash",
        json!({ "command": "touch roles.mark" }),
    ));
    assert_eq!(ask.decision, DecisionKind::Ask, "{ask:?}");
    let answered = web.call::<methods::PermissionsResolve>(ResolvePermissionParams {
        request_id: ask.request_id.clone().expect("an ask has its id"),
        decision: PermissionDecision::Deny,
        note: Some("not now".into()),
    });
    assert_eq!(answered.decision, Some(PermissionDecision::Deny));
    assert_eq!(answered.resolved_by.as_ref(), Some(&by), "{answered:?}");
    let row = poll_until("the tool.ask_answered audit row", BOUND, || {
        audit(&mut web, Some(&sid))
            .items
            .into_iter()
            .find(|e| e.action == AuditAction::ToolAskAnswered)
    });
    assert_eq!(row.detail["by"], by_json, "{row:?}");
    assert_eq!(row.detail["note"], "not now", "{row:?}");
}

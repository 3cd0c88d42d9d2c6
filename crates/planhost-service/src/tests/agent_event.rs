//! `agent.event` through the public service: the lifecycle of Claude Code and pi, event by
//! event, with real SQLite, a real workspace and (for `agent.run`) real processes.

use std::path::Path;
use std::sync::Arc;

use planhost_core::{
    Agent, AgentMode, ApprovalAction, DirectiveKind, ErrorCode, LifecycleRule, ManualClock, Mode,
    PolicyRule, Role, RuleId, SessionEndReason, SessionSource, TargetPermissionMode,
};
use planhost_protocol::{
    AgentEvent, AgentEventParams, AgentEventResult, AgentRunParams, InitializeParams,
    PROTOCOL_VERSION, ResolvePlanParams, methods,
};
use serde_json::{Value, json};

use super::fixture::{T0, block_on};
use crate::{Connection, Service, ServiceConfig};

pub(super) struct World {
    pub(super) clock: Arc<ManualClock>,
    pub(super) service: Service,
    pub(super) agent: Connection,
    pub(super) person: Connection,
    pub(super) workspace: tempfile::TempDir,
    pub(super) home: tempfile::TempDir,
    _state: tempfile::TempDir,
}

fn connect(service: &Service, name: &str, roles: Vec<Role>) -> Connection {
    let hello = InitializeParams {
        protocol_version: PROTOCOL_VERSION,
        client_name: name.into(),
        client_version: None,
        roles,
        tool_activity: false,
        events: planhost_protocol::EventScope::All,
        agent_process: None,
    };
    service.connect(&hello, crate::Peer::Embedded).unwrap().0
}

pub(super) fn world() -> World {
    let state = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let config = ServiceConfig {
        clock: clock.clone(),
        ..ServiceConfig::new(state.path())
    };
    let service = Service::start(config).unwrap().service;
    let agent = connect(&service, "hook-test", vec![Role::Agent, Role::Observer]);
    let person = connect(
        &service,
        "person-test",
        vec![Role::Approver, Role::Observer],
    );
    World {
        clock,
        service,
        agent,
        person,
        workspace: tempfile::tempdir().unwrap(),
        home: tempfile::tempdir().unwrap(),
        _state: state,
    }
}

impl World {
    fn config_dir(&self) -> String {
        self.home.path().join(".claude").display().to_string()
    }

    pub(super) async fn send(
        &self,
        agent: Agent,
        attended: bool,
        event: AgentEvent,
    ) -> AgentEventResult {
        self.try_send(agent, attended, event).await.unwrap()
    }

    async fn try_send(
        &self,
        agent: Agent,
        attended: bool,
        event: AgentEvent,
    ) -> crate::Result<AgentEventResult> {
        // Every event a moment after the last, as on a real clock.
        self.clock.advance_ms(5);
        self.agent
            .call::<methods::AgentEvent>(AgentEventParams {
                agent,
                external_session_id: format!("{agent}-1"),
                workspace_root: self.workspace.path().display().to_string(),
                attended,
                persistence: None,
                branch_path: None,
                agent_config_dir: Some(self.config_dir()),
                event,
            })
            .await
    }

    async fn resolve(&self, r: &AgentEventResult, approve: bool, feedback: Option<&str>) {
        let a = r.approval.as_ref().expect("an approval");
        self.person
            .call::<methods::PlansResolve>(ResolvePlanParams {
                proposal_id: a.proposal_id.clone(),
                session_id: a.session_id.clone(),
                turn_id: a.turn_id.clone(),
                tool_call_id: a.tool_call_id.clone(),
                version: Some(a.version),
                artifact_sha256: Some(a.artifact_sha256.clone()),
                action: if approve {
                    ApprovalAction::Approve
                } else {
                    ApprovalAction::Reject
                },
                target_permission_mode: approve.then_some(TargetPermissionMode::Ask),
                feedback: feedback.map(str::to_owned),
            })
            .await
            .unwrap();
    }
}

pub(super) fn tool(call: &str, tool: &str, input: Value) -> AgentEvent {
    AgentEvent::ToolProposed {
        call_id: call.into(),
        tool: tool.into(),
        input,
        batch_index: None,
        batch_size: None,
        provenance: None,
        cwd: None,
    }
}

pub(super) fn prompt(agent_mode: Option<AgentMode>) -> AgentEvent {
    AgentEvent::PromptSubmitted {
        agent_mode,
        handoff_token: None,
    }
}

fn kind(r: &AgentEventResult) -> (DirectiveKind, String) {
    (r.directive.kind, r.directive.rule.as_str().to_owned())
}

#[test]
fn claude_code_plans_submits_and_carries_out_through_one_method() {
    block_on(async {
        let w = world();
        let cc = Agent::ClaudeCode;
        let start = AgentEvent::SessionStarted {
            source: SessionSource::Startup,
        };
        let r = w.send(cc, true, start).await;
        assert_eq!(r.session.agent, cc);
        // Claude Code's own plan mode puts the session in Plan.
        let r = w.send(cc, true, prompt(Some(AgentMode::Plan))).await;
        assert_eq!(r.session.mode, Mode::Plan);
        assert_eq!(
            r.directive.rule,
            RuleId::Lifecycle(LifecycleRule::PlanEnteredByAgentMode)
        );
        // A write is denied; the agent's own plan file is the one file admitted, audited as
        // the policy's rule.
        let file = w.workspace.path().join("x.txt").display().to_string();
        let r = w
            .send(
                cc,
                true,
                tool("t1", "Write", json!({ "file_path": file, "content": "x" })),
            )
            .await;
        assert_eq!(r.directive.kind, DirectiveKind::Deny);
        assert_eq!(r.directive.code, Some(ErrorCode::PolicyPlanWriteDenied));
        let draft = format!("{}/plans/brave-otter.md", w.config_dir());
        let input = json!({ "file_path": draft, "content": "# Plan: tidy\n1. a\n" });
        let r = w.send(cc, true, tool("t2", "Write", input.clone())).await;
        assert_eq!(
            kind(&r),
            (
                DirectiveKind::Allow,
                PolicyRule::PlanDraftFile.as_str().into()
            )
        );
        fs_err::create_dir_all(Path::new(&draft).parent().unwrap()).unwrap();
        fs_err::write(&draft, "# Plan: tidy\n1. a\n").unwrap();
        let done = AgentEvent::ToolFinished {
            call_id: "t2".into(),
            tool: "Write".into(),
            input: Some(input),
            is_error: false,
        };
        let r = w.send(cc, true, done).await;
        assert_eq!(
            r.checkpoint.map(|c| c.revision),
            Some(1),
            "the draft is kept"
        );
        // A read-only command runs through planhost; one that may change files asks in Claude
        // Code's own dialog, and is refused when nobody is there.
        let r = w
            .send(cc, true, tool("t3", "Bash", json!({ "command": "ls" })))
            .await;
        assert_eq!(r.directive.kind, DirectiveKind::Allow);
        assert!(r.directive.route_shell);
        let rm = json!({ "command": "rm -rf build" });
        let r = w.send(cc, true, tool("t4", "Bash", rm.clone())).await;
        assert_eq!(r.directive.kind, DirectiveKind::Ask);
        assert!(r.directive.route_shell);
        let r = w.send(cc, false, tool("t5", "Bash", rm)).await;
        assert_eq!(
            (r.directive.kind, r.directive.code),
            (DirectiveKind::Deny, Some(ErrorCode::PermissionNoPerson))
        );
        // ExitPlanMode is SubmitPlan: an immutable artifact under .planhost/plan/, and the
        // model is told to stop (attended) while the person is told where to answer.
        let offer = tool(
            "t6",
            "ExitPlanMode",
            json!({ "plan": "# Plan: tidy\n1. a\n" }),
        );
        let r = w.send(cc, true, offer.clone()).await;
        assert_eq!(
            kind(&r),
            (DirectiveKind::Deny, "lifecycle.plan_submitted".into())
        );
        let approval = r.approval.clone().unwrap();
        assert!(
            approval
                .artifact_relative_path
                .starts_with(".planhost/plan/tidy-"),
            "{}",
            approval.artifact_relative_path
        );
        assert_eq!(approval.title, "tidy");
        let notice = r.notice.clone().unwrap().text;
        assert!(notice.contains(planhost_core::short_id(approval.proposal_id.as_str())));
        // Asked again while it waits: still held.
        let again = w.send(cc, true, offer.clone()).await;
        assert_eq!(again.directive.kind, DirectiveKind::Deny);
        // The person approves; the next prompt carries out the exact plan.
        w.resolve(&r, true, None).await;
        w.send(cc, true, AgentEvent::TurnStopped { aborted: false })
            .await;
        let r2 = w.send(cc, true, prompt(Some(AgentMode::Plan))).await;
        assert_eq!(
            r2.directive.rule,
            RuleId::Lifecycle(LifecycleRule::ExecutionClaimed)
        );
        assert!(r2.context.unwrap().contains("# Plan: tidy\n1. a\n"));
        assert_eq!(r2.session.mode, Mode::Agent);
        // ExitPlanMode again now lets Claude Code leave its plan mode.
        let r3 = w.send(cc, true, offer).await;
        assert_eq!(r3.directive.kind, DirectiveKind::Allow);
        w.agent.close();
        w.person.close();
        w.service.shutdown();
    });
}

#[test]
fn a_rejection_reaches_the_model_once_on_the_next_prompt() {
    block_on(async {
        let w = world();
        let cc = Agent::ClaudeCode;
        w.send(cc, true, prompt(Some(AgentMode::Plan))).await;
        let offer = tool("t1", "ExitPlanMode", json!({ "plan": "# Plan\n1. a\n" }));
        let r = w.send(cc, true, offer).await;
        w.send(cc, true, AgentEvent::TurnStopped { aborted: false })
            .await;
        w.resolve(&r, false, Some("keep the rotation")).await;
        let next = w.send(cc, true, prompt(Some(AgentMode::Plan))).await;
        let context = next.context.unwrap_or_default();
        assert!(
            context.contains("Their note: keep the rotation"),
            "{context}"
        );
        w.send(cc, true, AgentEvent::TurnStopped { aborted: false })
            .await;
        let after = w.send(cc, true, prompt(Some(AgentMode::Plan))).await;
        assert_eq!(after.context, None, "told once");
        w.service.shutdown();
    });
}

#[test]
fn pi_submits_by_running_its_tool_and_drafts_checkpoints() {
    block_on(async {
        let w = world();
        let pi = Agent::Pi;
        let r = w.send(pi, true, prompt(None)).await;
        assert!(r.session.active_turn.is_some());
        // pi enters Plan with its tool.
        let enter = w
            .send(pi, true, tool("e1", "EnterPlanMode", json!({})))
            .await;
        assert_eq!(enter.directive.kind, DirectiveKind::Allow);
        assert_eq!(enter.session.mode, Mode::Plan, "entered once allowed");
        let draft = AgentEvent::DraftWritten {
            markdown: "# Plan\n1. a\n".into(),
            expected_revision: 0,
        };
        let saved = w.send(pi, true, draft).await;
        assert_eq!(saved.checkpoint.map(|c| c.revision), Some(1));
        assert!(saved.context.unwrap().starts_with("Saved as revision 1"));
        // SubmitPlan: its proposal is authorized, its execution offers the plan.
        let submit = json!({ "title": "T", "markdown": "# Plan\n1. a\n", "question": "Go?" });
        let allowed = w.send(pi, true, tool("s1", "SubmitPlan", submit)).await;
        assert_eq!(allowed.directive.kind, DirectiveKind::Allow);
        let offer = AgentEvent::PlanOffered {
            call_id: "s1".into(),
            markdown: "# Plan\n1. a\n".into(),
            title: Some("T".into()),
            question: Some("Go?".into()),
            batch_index: None,
            batch_size: None,
        };
        let offered = w.send(pi, true, offer).await;
        assert_eq!(offered.directive.kind, DirectiveKind::Proceed);
        assert!(
            offered
                .context
                .unwrap()
                .starts_with("planhost saved this plan as .pi/plan/t-")
        );
        assert!(offered.session.pending_approval.is_some());
        w.send(
            pi,
            true,
            AgentEvent::SessionEnded {
                reason: Some(SessionEndReason::Exit),
            },
        )
        .await;
        w.service.shutdown();
    });
}

#[test]
fn a_routed_command_runs_once_exactly_as_allowed() {
    block_on(async {
        let w = world();
        let cc = Agent::ClaudeCode;
        w.send(cc, true, prompt(None)).await;
        let r = w
            .send(
                cc,
                true,
                tool("b1", "Bash", json!({ "command": "echo routed; pwd" })),
            )
            .await;
        assert_eq!(r.directive.kind, DirectiveKind::Allow);
        let run = |command: &str| AgentRunParams {
            call_id: "b1".into(),
            command: command.into(),
            cwd: w.workspace.path().display().to_string(),
            env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
        };
        // Another command than the one allowed is refused, and spends nothing.
        let other = w
            .agent
            .call::<methods::AgentRun>(run("echo other"))
            .await
            .unwrap_err();
        assert_eq!(other.code(), ErrorCode::ToolNotAuthorized);
        let done = w
            .agent
            .call::<methods::AgentRun>(run("echo routed; pwd"))
            .await;
        // The mismatch spent the grant: the host never runs a call whose input changed.
        assert_eq!(done.unwrap_err().code(), ErrorCode::ToolNotAuthorized);
        let r = w
            .send(
                cc,
                true,
                tool("b2", "Bash", json!({ "command": "echo routed" })),
            )
            .await;
        assert_eq!(r.directive.kind, DirectiveKind::Allow);
        let mut params = run("echo routed");
        params.call_id = "b2".into();
        let out = w
            .agent
            .call::<methods::AgentRun>(params.clone())
            .await
            .unwrap();
        assert_eq!(out.result.run.stdout.kept, "routed\n");
        let twice = w.agent.call::<methods::AgentRun>(params).await.unwrap_err();
        assert_eq!(twice.code(), ErrorCode::ToolNotAuthorized);
        w.service.shutdown();
    });
}

/// DESIGN decision 14 through the whole path (classifier, reach, policy): in Plan, every way a
/// command could reach an approval surface or start something outside planhost's reach is
/// denied outright (no ask a person could approve by habit), for a routed agent and for pi —
/// behind wrappers, `sh -c`, pipes and absolute paths alike.
#[test]
fn plan_denies_every_way_to_an_approval_surface_or_out_of_reach() {
    block_on(async {
        let w = world();
        let state = w._state.path().display().to_string();
        let surface = [
            "planhost approve abc".to_owned(),
            "/usr/local/bin/planhost approve abc".into(),
            "echo abc | xargs planhost approve".into(),
            "sh -c 'planhost approve abc'".into(),
            "bash -c \"planhost-hook run x -- ls\"".into(),
            "nohup planhost approve abc &".into(),
            "(sleep 4; setsid -f planhost approve abc --mode auto) > out.txt 2>&1 &".into(),
            "env A=1 planhost approve abc".into(),
            "timeout 5 planhost approve abc".into(),
            format!("cat {state}/web.json"),
            "curl -s http://planhost.localhost:7766/".into(),
        ];
        let escape = [
            "systemd-run --user true",
            "echo make | at now",
            "tmux new -d make",
            "timeout 5 ssh host true",
            "bash -c 'crontab -l'",
            "nohup systemd-run --user true &",
            "nohup setsid systemd-run --user true &",
        ];
        let cases = surface
            .iter()
            .map(|c| (c.as_str(), PolicyRule::PlanApprovalSurface))
            .chain(escape.iter().map(|c| (*c, PolicyRule::PlanScopeEscape)));
        for (i, (command, rule)) in cases.enumerate() {
            for agent in [Agent::ClaudeCode, Agent::Pi] {
                let started = w.send(agent, true, prompt(Some(AgentMode::Plan))).await;
                if started.session.mode != Mode::Plan {
                    w.send(
                        agent,
                        true,
                        tool(&format!("e{i}"), "EnterPlanMode", json!({})),
                    )
                    .await;
                }
                let r = w
                    .send(
                        agent,
                        true,
                        tool(&format!("c{i}"), "Bash", json!({ "command": command })),
                    )
                    .await;
                assert_eq!(
                    (r.directive.kind, r.directive.rule.as_str()),
                    (DirectiveKind::Deny, rule.as_str()),
                    "{agent}: `{command}`: {r:?}"
                );
                w.send(agent, true, AgentEvent::TurnStopped { aborted: false })
                    .await;
            }
        }
        w.service.shutdown();
    });
}

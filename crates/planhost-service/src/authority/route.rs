//! `agent.run`: a shell command of an agent that runs its own shell, routed through the host's
//! runner by the agent's hook (DESIGN decision 14). Only the command `agent.event` allowed runs
//! (or the one it asked about in the agent's own dialog, once the agent runs it on the person's
//! yes), exactly, once, in the host's scope: the run's marker and cgroup, the host as the
//! subreaper of what it leaves behind, the agent's own timeout, the whole tree killed on timeout
//! and cancel, and what is left when it ends reaped. Whatever it started can therefore never
//! answer a plan: the approver role is refused to every process of the host's runs.

use planhost_core::{
    AuditAction, CommandSafety, ErrorCode, PermissionDecision, ToolCallId, ToolNature,
};
use planhost_exec::Timeout;
use planhost_protocol::{AgentRunParams, AgentRunResult};
use planhost_store::AuditRow;
use planhost_tools::{RoutedRun, git_guard};
use serde_json::json;

use super::execute::{Recheck, forward_output, recheck};
use super::{CallKey, Grant, GrantedBy, Routed, ToolAuthority, activity, lock, now};
use crate::connection::Caller;
use crate::service::Inner;
use crate::{Result, ServiceError};

/// How long a command the agent runs in the background may run through planhost: the agent
/// gives it no bound of its own, and it is still killed with its whole tree when the agent ends
/// it or the host stops.
const BACKGROUND_MS: u64 = 24 * 60 * 60 * 1000;

fn not_allowed(call: &ToolCallId, why: &str) -> ServiceError {
    ServiceError::refused(
        ErrorCode::ToolNotAuthorized,
        format!("planhost did not allow tool call {call} to run this command: {why}"),
    )
}

impl ToolAuthority {
    /// `agent.run`.
    pub(crate) async fn run_routed(
        &self,
        svc: &Inner,
        caller: &Caller,
        p: AgentRunParams,
    ) -> Result<AgentRunResult> {
        let session = lock(&self.routes)
            .get(&p.call_id)
            .cloned()
            .ok_or_else(|| not_allowed(&p.call_id, "no allowed or asked shell call has this id"))?;
        let key: CallKey = (session.clone(), p.call_id.clone());
        let grant = self.take_routed_grant(svc, caller, &key, &p).await?;
        let Some(routed) = grant.routed.clone() else {
            return Err(not_allowed(&p.call_id, "it is not a shell call"));
        };
        lock(&self.routes).remove(&p.call_id);
        let cancel = self.start_running(svc, caller, &key, &grant, &grant.tool_name)?;
        let outcome = self
            .run_granted(svc, caller, &key, &p, &grant, &routed, cancel)
            .await;
        lock(&self.running).remove(&key);
        activity(svc, &key, &grant.turn_id, &grant.tool_name, None);
        let summary = match &outcome {
            Ok(r) => json!({ "tool": grant.tool_name, "ok": true, "exit": r.result.run.exit,
                             "routed": true, "cwd": p.cwd }),
            Err(e) => json!({ "tool": grant.tool_name, "ok": false, "code": e.code(),
                              "routed": true, "cwd": p.cwd }),
        };
        svc.audit.record(AuditRow {
            at: now(svc),
            session_id: Some(key.0.clone()),
            turn_id: Some(grant.turn_id.clone()),
            tool_call_id: Some(key.1.clone()),
            action: AuditAction::ToolExecuted,
            detail: summary.to_string(),
        });
        outcome
    }

    /// The call's grant, or its ask answered yes in the agent's own dialog (the agent runs the
    /// routed command only on the person's yes there); the command must be exactly the one
    /// allowed.
    async fn take_routed_grant(
        &self,
        svc: &Inner,
        caller: &Caller,
        key: &CallKey,
        p: &AgentRunParams,
    ) -> Result<Grant> {
        let same =
            |routed: &Option<Routed>| routed.as_ref().is_some_and(|r| r.command == p.command);
        let granted = lock(&self.grants).remove(key);
        if let Some(grant) = granted {
            if !same(&grant.routed) {
                activity(svc, key, &grant.turn_id, &grant.tool_name, None);
                return Err(not_allowed(
                    &p.call_id,
                    "the command is not the one allowed",
                ));
            }
            return Ok(grant);
        }
        let ask = lock(&self.asks)
            .iter()
            .find(|a| a.info.session_id == key.0 && a.info.tool_call_id == key.1)
            .map(|a| {
                (
                    a.info.clone(),
                    a.input_sha256.clone(),
                    a.verdict.clone(),
                    a.facts.clone(),
                    a.routed.clone(),
                )
            });
        let Some((info, digest, verdict, facts, routed)) = ask else {
            return Err(not_allowed(
                &p.call_id,
                "its grant was used, or its turn ended",
            ));
        };
        if !same(&routed) {
            return Err(not_allowed(
                &p.call_id,
                "the command is not the one asked about",
            ));
        }
        match info.decision {
            Some(PermissionDecision::Deny) => {
                return Err(ServiceError::refused(
                    ErrorCode::PermissionDenied,
                    "a person answered no to this command in planhost; it did not run",
                ));
            }
            // Answered yes elsewhere: its grant was used already.
            Some(PermissionDecision::Allow) => {
                return Err(not_allowed(&p.call_id, "its grant was used"));
            }
            None => {}
        }
        self.answer_in_agent_dialog(svc, caller, &key.0, &key.1)
            .await?;
        Ok(Grant {
            turn_id: info.turn_id,
            tool_name: info.tool_name,
            input_sha256: digest,
            by: GrantedBy::Person,
            since: now(svc),
            verdict,
            facts,
            routed,
        })
    }

    #[allow(clippy::too_many_arguments)]
    async fn run_granted(
        &self,
        svc: &Inner,
        caller: &Caller,
        key: &CallKey,
        p: &AgentRunParams,
        grant: &Grant,
        routed: &Routed,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<AgentRunResult> {
        let check = Recheck {
            by: grant.by,
            verdict: grant.verdict.clone(),
            facts: grant.facts.clone(),
        };
        let (session, turn, tool, input) = (
            key.0.clone(),
            grant.turn_id.clone(),
            grant.tool_name.clone(),
            routed.input.clone(),
        );
        let ctx = svc
            .engine(move |e| recheck(e, &session, turn, &tool, &input, &check))
            .await?;
        let profile = ctx.agent.profile();
        let Some(shell) = ctx.pinned else {
            return Err(ServiceError::refused(
                ErrorCode::ShellNotFound,
                "the turn pinned no shell to run the command in",
            ));
        };
        let timeout = if routed.background {
            Timeout::within(None, BACKGROUND_MS, BACKGROUND_MS)
        } else {
            Timeout::within(
                routed.timeout_ms,
                profile.shell_timeout_default_ms,
                profile.shell_timeout_max_ms,
            )
        }
        .map_err(|e| ServiceError::refused(e.code(), e.to_string()))?;
        let cwd = std::path::PathBuf::from(&p.cwd);
        // A command the policy admitted unasked, proven read-only: git may run nothing the
        // repository names (DESIGN decision 15).
        let unasked = grant.by == GrantedBy::Policy
            && matches!(grant.verdict, Some(CommandSafety::ReadOnly))
            && ctx.agent.classify(&grant.tool_name).nature == ToolNature::RunsCommands;
        let (env, extra_env) = if unasked {
            let env: Vec<(String, String)> = p
                .env
                .iter()
                .filter(|(k, _)| !git_guard::dropped(k))
                .cloned()
                .collect();
            let extra = super::unasked_git_env(&cwd, &env, &routed.command)?;
            (env, extra)
        } else {
            (p.env.clone(), Vec::new())
        };
        let run = RoutedRun {
            command: routed.command.clone(),
            cwd,
            env,
            extra_env,
            timeout,
        };
        let (tx, forward) = forward_output(caller, key.0.clone(), key.1.clone());
        let result = planhost_tools::bash_routed(&run, &shell, tx, cancel).await;
        let _ = forward.await;
        let result = result.map_err(|e| ServiceError::refused(e.code(), e.to_string()))?;
        Ok(AgentRunResult { result })
    }
}

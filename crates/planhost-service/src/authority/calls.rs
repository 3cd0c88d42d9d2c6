//! A tool call's life after its decision: execution with the re-check, the client's own run
//! finishing, a turn or mode change voiding grants, cancel and stop.

use planhost_core::{AuditAction, SessionId, Timestamp, TurnId};
use planhost_protocol::{
    CancelParams, CancelResult, ExecuteOutput, ExecuteParams, ExecuteResult, FinishedParams,
    FinishedResult, ToolCallInfo, ToolCallState,
};
use planhost_store::AuditRow;
use serde_json::json;

use super::{
    CallKey, Grant, Running, ToolAuthority, activity, announce, execute, input_digest, lock, now,
};
use crate::connection::Caller;
use crate::fanout::Fanout;
use crate::service::Inner;
use crate::{Result, ServiceError};
use planhost_core::ErrorCode;

impl ToolAuthority {
    /// Registers a granted call as running (cancelled with the caller's connection), refusing
    /// one already running, and says to the observers that `tool` runs.
    pub(super) fn start_running(
        &self,
        svc: &Inner,
        caller: &Caller,
        key: &CallKey,
        grant: &Grant,
        tool: &str,
    ) -> Result<tokio_util::sync::CancellationToken> {
        let cancel = caller.kill.child_token();
        {
            let mut running = lock(&self.running);
            if running.contains_key(key) {
                return Err(ServiceError::refused(
                    ErrorCode::ToolCallRunning,
                    "this tool call is already running",
                ));
            }
            running.insert(
                key.clone(),
                Running {
                    cancel: cancel.clone(),
                    conn: caller.conn,
                    turn_id: grant.turn_id.clone(),
                    tool_name: grant.tool_name.clone(),
                    since: now(svc),
                },
            );
        }
        activity(svc, key, &grant.turn_id, tool, Some(ToolCallState::Running));
        Ok(cancel)
    }

    /// A turn ended: its grants and asks are void. Called from the engine thread's event hook,
    /// before the reply of the change that ended it.
    /// Watchers of tool activity hear of every call withdrawn (`at` is the event's time).
    pub(crate) fn turn_closed(
        &self,
        fanout: &Fanout,
        at: Timestamp,
        session_id: &SessionId,
        turn_id: &TurnId,
    ) {
        let watched = fanout.has_tool_watchers();
        let mut void: Vec<(CallKey, String)> = Vec::new();
        lock(&self.grants).retain(|key, g| {
            let ends = key.0 == *session_id && g.turn_id == *turn_id;
            if ends && watched {
                void.push((key.clone(), g.tool_name.clone()));
            }
            !ends
        });
        lock(&self.asks).retain(|a| {
            let ends = a.info.session_id == *session_id && a.info.turn_id == *turn_id;
            if ends && watched && a.info.decision.is_none() {
                let key = (a.info.session_id.clone(), a.info.tool_call_id.clone());
                void.push((key, a.info.tool_name.clone()));
            }
            !ends
        });
        for (key, tool) in &void {
            announce(fanout, at, key, turn_id, tool, None);
        }
    }

    /// The session's mode or permission changed: every grant must be asked for again.
    pub(crate) fn session_changed(&self, fanout: &Fanout, at: Timestamp, session_id: &SessionId) {
        let watched = fanout.has_tool_watchers();
        let mut void: Vec<(CallKey, Grant)> = Vec::new();
        lock(&self.grants).retain(|key, g| {
            let ends = key.0 == *session_id;
            if ends && watched {
                void.push((key.clone(), g.clone()));
            }
            !ends
        });
        for (key, g) in &void {
            announce(fanout, at, key, &g.turn_id, &g.tool_name, None);
        }
    }

    /// `tools.execute`: only a call allowed in this turn for exactly this input runs, once, and
    /// only if the policy still allows it now.
    pub(crate) async fn execute(
        &self,
        svc: &Inner,
        caller: &Caller,
        p: ExecuteParams,
    ) -> Result<ExecuteResult> {
        let key = (p.session_id.clone(), p.tool_call_id.clone());
        let grant = lock(&self.grants).remove(&key);
        let grant = match grant {
            Some(g)
                if g.turn_id == p.turn_id
                    && g.tool_name == p.tool.as_str()
                    && g.input_sha256 == input_digest(&p.input) =>
            {
                g
            }
            other => {
                // A grant for other input or another turn is spent by the attempt.
                if let Some(g) = other {
                    activity(svc, &key, &g.turn_id, &g.tool_name, None);
                }
                return Err(ServiceError::refused(
                    ErrorCode::ToolNotAuthorized,
                    format!(
                        "tool call {} was not authorized for {} with this input in this turn",
                        p.tool_call_id,
                        p.tool.as_str()
                    ),
                ));
            }
        };
        // Cancelled with the connection, even if it closes before the call registers below.
        let cancel = self.start_running(svc, caller, &key, &grant, p.tool.as_str())?;
        let recheck = execute::Recheck {
            by: grant.by,
            verdict: grant.verdict,
            facts: grant.facts,
        };
        let outcome = execute::run(svc, caller, &p, recheck, cancel).await;
        lock(&self.running).remove(&key);
        activity(svc, &key, &grant.turn_id, p.tool.as_str(), None);
        let summary = match &outcome {
            Ok(v) => {
                // Bash's exit status; null for the file tools.
                let exit = if let ExecuteOutput::Bash(bash) = &v.output {
                    Some(bash.run.exit)
                } else {
                    None
                };
                json!({ "tool": p.tool.as_str(), "ok": true, "exit": exit })
            }
            Err(e) => json!({ "tool": p.tool.as_str(), "ok": false, "code": e.code() }),
        };
        svc.audit.record(AuditRow {
            at: now(svc),
            session_id: Some(p.session_id.clone()),
            turn_id: Some(p.turn_id.clone()),
            tool_call_id: Some(p.tool_call_id.clone()),
            action: AuditAction::ToolExecuted,
            detail: summary.to_string(),
        });
        outcome
    }

    /// A host method that is itself the tool (`plans.submit`, `plans.enter`) completed its call.
    pub(crate) fn release(&self, svc: &Inner, key: &CallKey) {
        let released = lock(&self.grants).remove(key);
        if let Some(grant) = released {
            activity(svc, key, &grant.turn_id, &grant.tool_name, None);
        }
    }

    /// `tools.finished`: the client ran an allowed call itself and it ended; its grant is void.
    ///
    /// It answers no ask: only `agent.event` knows whether the agent's own dialog showed one
    /// (an ask it forced there), and records that answer.
    pub(crate) fn finished(&self, svc: &Inner, p: &FinishedParams) -> FinishedResult {
        self.release_grant(svc, p)
    }

    /// Drops the call's unused grant, recording that the client ran it.
    pub(crate) fn release_grant(&self, svc: &Inner, p: &FinishedParams) -> FinishedResult {
        let key = (p.session_id.clone(), p.tool_call_id.clone());
        let released = {
            let mut grants = lock(&self.grants);
            match grants.get(&key) {
                Some(g) if g.turn_id == p.turn_id => grants.remove(&key),
                Some(_) | None => None,
            }
        };
        let Some(grant) = released else {
            return FinishedResult { released: false };
        };
        activity(svc, &key, &grant.turn_id, &grant.tool_name, None);
        svc.audit.record(AuditRow {
            at: now(svc),
            session_id: Some(p.session_id.clone()),
            turn_id: Some(p.turn_id.clone()),
            tool_call_id: Some(p.tool_call_id.clone()),
            action: AuditAction::ToolFinished,
            detail: json!({ "tool": grant.tool_name, "ok": !p.is_error, "ranBy": "client" })
                .to_string(),
        });
        FinishedResult { released: true }
    }

    /// The unfinished tool calls of a session, oldest first: open asks, unused grants and
    /// calls the host is running.
    pub(crate) fn in_flight(&self, session_id: &SessionId) -> Vec<ToolCallInfo> {
        let info = |(_, call): &CallKey, turn: &TurnId, tool: &str, state, since| ToolCallInfo {
            turn_id: turn.clone(),
            tool_call_id: call.clone(),
            tool_name: tool.to_owned(),
            state,
            since,
        };
        let mut calls: Vec<ToolCallInfo> = Vec::new();
        for (key, g) in lock(&self.grants)
            .iter()
            .filter(|(k, _)| k.0 == *session_id)
        {
            calls.push(info(
                key,
                &g.turn_id,
                &g.tool_name,
                ToolCallState::Allowed,
                g.since,
            ));
        }
        for (key, r) in lock(&self.running)
            .iter()
            .filter(|(k, _)| k.0 == *session_id)
        {
            calls.push(info(
                key,
                &r.turn_id,
                &r.tool_name,
                ToolCallState::Running,
                r.since,
            ));
        }
        for a in lock(&self.asks)
            .iter()
            .filter(|a| a.info.session_id == *session_id && a.info.decision.is_none())
        {
            calls.push(ToolCallInfo {
                turn_id: a.info.turn_id.clone(),
                tool_call_id: a.info.tool_call_id.clone(),
                tool_name: a.info.tool_name.clone(),
                state: ToolCallState::Asking,
                since: a.info.asked_at,
            });
        }
        calls.sort_by(|a, b| {
            (a.since, a.tool_call_id.as_str()).cmp(&(b.since, b.tool_call_id.as_str()))
        });
        calls
    }

    /// `tools.cancel`.
    pub(crate) fn cancel(&self, p: &CancelParams) -> CancelResult {
        let cancelled = lock(&self.running)
            .get(&(p.session_id.clone(), p.tool_call_id.clone()))
            .map(|r| r.cancel.cancel())
            .is_some();
        CancelResult { cancelled }
    }

    /// `tools.stop`: a person stops a call the host runs. The stop is on record (`tool.stopped`,
    /// with who gave it) before the call is cancelled; a call that is not running is left alone.
    pub(crate) async fn stop(
        &self,
        svc: &Inner,
        caller: &Caller,
        p: &CancelParams,
    ) -> Result<CancelResult> {
        let key = (p.session_id.clone(), p.tool_call_id.clone());
        let running = lock(&self.running)
            .get(&key)
            .map(|r| (r.turn_id.clone(), r.tool_name.clone()));
        let Some((turn_id, tool_name)) = running else {
            return Ok(CancelResult { cancelled: false });
        };
        let (session, call, by) = (
            p.session_id.clone(),
            p.tool_call_id.clone(),
            caller.by.clone(),
        );
        svc.engine(move |e| {
            Ok(e.store()
                .record_tool_stopped(&session, &turn_id, &call, &tool_name, &by)?)
        })
        .await?;
        Ok(self.cancel(p))
    }

    /// A connection went away: cancel what it was running (its process trees die).
    pub(crate) fn connection_closed(&self, conn: u64) {
        for running in lock(&self.running).values().filter(|r| r.conn == conn) {
            running.cancel.cancel();
        }
    }
}

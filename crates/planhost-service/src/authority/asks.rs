//! Asks and their answers: any approver answers an open ask, once; the agent's own dialog
//! answers one only where planhost asked there.

use planhost_core::{PermissionDecision, SessionId, ToolCallId};
use planhost_protocol::{
    AskList, AskStatus, AsksFilter, PermissionAsk, ResolvePermissionParams, ToolCallState,
};

use super::{Grant, GrantedBy, ToolAuthority, activity, ask_record, lock, now};
use crate::connection::Caller;
use crate::service::Inner;
use crate::{Result, ServiceError};
use planhost_core::ErrorCode;

impl ToolAuthority {
    /// `permissions.resolve`: any approver answers an open ask, once.
    pub(crate) async fn resolve(
        &self,
        svc: &Inner,
        caller: &Caller,
        p: ResolvePermissionParams,
    ) -> Result<PermissionAsk> {
        let already = || {
            ServiceError::refused(
                ErrorCode::PermissionAlreadyResolved,
                "this ask was already answered",
            )
        };
        let (ask, digest) = {
            let asks = lock(&self.asks);
            let ask = asks
                .iter()
                .find(|a| a.info.request_id == p.request_id)
                .ok_or_else(|| {
                    ServiceError::refused(
                        ErrorCode::PermissionNotFound,
                        format!("no open ask {}", p.request_id),
                    )
                })?;
            if ask.info.decision.is_some() {
                return Err(already());
            }
            (ask.info.clone(), ask.input_sha256.clone())
        };
        let record = ask.clone();
        let note = p.note.clone();
        let by = caller.by.clone();
        let decision = p.decision;
        svc.engine(move |e| {
            Ok(e.store()
                .record_ask_answer(&ask_record(&record), decision, note.as_deref(), &by)?)
        })
        .await?;
        let mut asks = lock(&self.asks);
        let Some(slot) = asks.iter_mut().find(|a| a.info.request_id == p.request_id) else {
            return Err(ServiceError::refused(
                ErrorCode::PermissionNotFound,
                "the ask was withdrawn",
            ));
        };
        if slot.info.decision.is_some() {
            return Err(already());
        }
        slot.info.decision = Some(p.decision);
        slot.info.resolved_by = Some(caller.by.clone());
        let answered = slot.info.clone();
        let verdict = slot.verdict.clone();
        let (facts, routed) = (slot.facts.clone(), slot.routed.clone());
        drop(asks);
        let key = (ask.session_id.clone(), ask.tool_call_id.clone());
        let state = match p.decision {
            PermissionDecision::Allow => {
                let grant = Grant {
                    turn_id: ask.turn_id.clone(),
                    tool_name: ask.tool_name.clone(),
                    input_sha256: digest,
                    by: GrantedBy::Person,
                    since: now(svc),
                    verdict,
                    facts,
                    routed,
                };
                lock(&self.grants).insert(key.clone(), grant);
                Some(ToolCallState::Allowed)
            }
            PermissionDecision::Deny => None,
        };
        activity(svc, &key, &ask.turn_id, &ask.tool_name, state);
        Ok(answered)
    }

    /// `permissions.list`, newest first.
    pub(crate) fn list_asks(&self, p: &AsksFilter) -> AskList {
        let items = lock(&self.asks)
            .iter()
            .rev()
            .filter(|a| {
                p.session_id
                    .as_ref()
                    .is_none_or(|s| *s == a.info.session_id)
            })
            .filter(|a| {
                let status = match a.info.decision {
                    None => AskStatus::Open,
                    Some(_) => AskStatus::Answered,
                };
                p.status.as_ref().is_none_or(|s| s.contains(&status))
            })
            .take(crate::handlers::limit(p.limit))
            .map(|a| a.info.clone())
            .collect();
        AskList { items }
    }

    /// The call's ask, while nobody answered it.
    pub(crate) fn open_ask(
        &self,
        session_id: &SessionId,
        call: &ToolCallId,
    ) -> Option<PermissionAsk> {
        lock(&self.asks)
            .iter()
            .find(|a| {
                a.info.session_id == *session_id
                    && a.info.tool_call_id == *call
                    && a.info.decision.is_none()
            })
            .map(|a| a.info.clone())
    }

    /// A call planhost asked about in the agent's own dialog ran: the person said yes there.
    /// Its ask is closed as allowed, by the agent's face, answered in the agent's dialog, so
    /// that no surface offers to answer a call that already ran. It grants nothing.
    pub(crate) async fn answer_in_agent_dialog(
        &self,
        svc: &Inner,
        caller: &Caller,
        session_id: &SessionId,
        call: &ToolCallId,
    ) -> Result<Option<PermissionAsk>> {
        let Some(ask) = self.open_ask(session_id, call) else {
            return Ok(None);
        };
        let record = ask.clone();
        let by = planhost_core::Resolver {
            via: Some(planhost_core::AnswerSurface::AgentDialog),
            ..caller.by.clone()
        };
        let recorded = by.clone();
        svc.engine(move |e| {
            Ok(e.store().record_ask_answer(
                &ask_record(&record),
                PermissionDecision::Allow,
                Some("answered yes in the agent's own dialog, where planhost asked: the agent ran the call"),
                &recorded,
            )?)
        })
        .await?;
        let answered = {
            let mut asks = lock(&self.asks);
            let slot = asks
                .iter_mut()
                .find(|a| a.info.request_id == ask.request_id && a.info.decision.is_none());
            slot.map(|slot| {
                slot.info.decision = Some(PermissionDecision::Allow);
                slot.info.resolved_by = Some(by);
                slot.info.clone()
            })
        };
        let key = (session_id.clone(), call.clone());
        activity(svc, &key, &ask.turn_id, &ask.tool_name, None);
        Ok(answered)
    }
}

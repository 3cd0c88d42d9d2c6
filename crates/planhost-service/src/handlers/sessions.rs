//! `sessions.*` and `turns.*`.

use planhost_core::{SessionId, TurnOrigin};
use planhost_protocol::{
    BeginOrigin, BeginTurnParams, ConfigureParams, EndTurnParams, OpenSessionParams, SessionInfo,
    SessionList, SessionsFilter, SetModeParams, TurnInfo, TurnOutcome,
};
use planhost_store::{ApprovalQuery, Configure, ExecutionFilter};

use crate::convert;
use crate::engine::Engine;
use crate::service::Inner;
use crate::{Result, ServiceError};

/// The session with its running turn, pending approval and live execution, read on the engine.
pub(crate) fn info(e: &mut Engine, id: &SessionId) -> Result<SessionInfo> {
    let store = e.store();
    let s = store.session(id)?;
    let turn = store.active_turn(id)?;
    let rows = store.approvals_matching(&ApprovalQuery {
        session_id: Some(id),
        statuses: Some(&[planhost_core::ApprovalStatus::Pending]),
        execution: ExecutionFilter::Any,
        limit: 1,
    })?;
    let pending = rows.into_iter().next();
    let mut execution = |filter| -> Result<_> {
        let row = store
            .approvals_matching(&ApprovalQuery {
                session_id: Some(id),
                statuses: None,
                execution: filter,
                limit: 1,
            })?
            .into_iter()
            .next();
        Ok(match row {
            Some(a) => {
                let turn = match &a.execution_turn_id {
                    Some(t) => Some(store.turn(t)?),
                    None => None,
                };
                Some((a, turn))
            }
            None => None,
        })
    };
    let live = execution(ExecutionFilter::Live)?;
    let last = execution(ExecutionFilter::Finished)?;
    Ok(convert::session(s, turn, pending, live, last))
}

/// `info` with the tool calls only the authority knows (not the engine's state): those of the
/// running turn. (A grant recorded while its turn was ending may outlive the turn in memory; it
/// can never run, as `tools.execute` re-checks the turn, and it is not shown.)
pub(crate) fn with_tool_calls(svc: &Inner, mut info: SessionInfo) -> SessionInfo {
    info.tool_calls = match &info.active_turn {
        Some(turn) => svc
            .tools
            .in_flight(&info.id)
            .into_iter()
            .filter(|c| c.turn_id == turn.id)
            .collect(),
        None => Vec::new(),
    };
    info
}

pub(crate) async fn get(svc: &Inner, id: SessionId) -> Result<SessionInfo> {
    let info = svc.engine(move |e| info(e, &id)).await?;
    Ok(with_tool_calls(svc, info))
}

pub(crate) async fn open(svc: &Inner, p: OpenSessionParams) -> Result<SessionInfo> {
    svc.engine(move |e| {
        let s = e.open_session(
            p.workspace_root.as_ref(),
            p.external_id.as_deref(),
            p.interactivity,
            p.persistence,
            p.agent,
        )?;
        info(e, &s.id)
    })
    .await
    .map(|info| with_tool_calls(svc, info))
}

pub(crate) async fn list(svc: &Inner, p: SessionsFilter) -> Result<SessionList> {
    let limit = super::limit(p.limit);
    svc.engine(move |e| {
        let sessions = e.store().sessions_matching(
            p.workspace_root.as_deref(),
            limit,
            if p.include_ended == Some(true) {
                planhost_store::Ended::Included
            } else {
                planhost_store::Ended::Excluded
            },
        )?;
        let items = sessions
            .iter()
            .map(|s| info(e, &s.id))
            .collect::<Result<Vec<_>>>()?;
        Ok(SessionList { items })
    })
    .await
    .map(|list| SessionList {
        items: list
            .items
            .into_iter()
            .map(|info| with_tool_calls(svc, info))
            .collect(),
    })
}

pub(crate) async fn set_mode(svc: &Inner, p: SetModeParams) -> Result<SessionInfo> {
    svc.engine(move |e| {
        e.store().set_mode(&p.session_id, p.mode)?;
        info(e, &p.session_id)
    })
    .await
    .map(|info| with_tool_calls(svc, info))
}

pub(crate) async fn configure(svc: &Inner, p: ConfigureParams) -> Result<SessionInfo> {
    if let Some(Some(shell)) = p.shell_id {
        svc.shells.validate_setting(shell)?;
    }
    let change = Configure {
        permission_mode: p.permission_mode,
        shell_id: p.shell_id,
        provider: p.provider,
        model: p.model,
        policy_preset: p.policy_preset,
    };
    svc.engine(move |e| {
        e.store().configure(&p.session_id, &change)?;
        info(e, &p.session_id)
    })
    .await
    .map(|info| with_tool_calls(svc, info))
}

pub(crate) async fn begin_turn(svc: &Inner, p: BeginTurnParams) -> Result<TurnInfo> {
    let origin = match p.origin {
        None | Some(BeginOrigin::User) => TurnOrigin::User,
        Some(BeginOrigin::Scheduled) => TurnOrigin::Scheduled,
    };
    let shells = svc.shells;
    let turn = svc
        .engine(move |e| {
            let pin = shells.pin_for(e, &p.session_id)?;
            e.begin_turn(&p.session_id, origin, pin.as_ref())
        })
        .await?;
    Ok(convert::turn(turn))
}

pub(crate) async fn end_turn(svc: &Inner, p: EndTurnParams) -> Result<TurnInfo> {
    let turn = svc
        .engine(move |e| {
            let (session, turn) = (&p.session_id, &p.turn_id);
            Ok::<_, ServiceError>(match p.outcome {
                TurnOutcome::Completed => e.store().end_turn(session, turn)?,
                TurnOutcome::Aborted => e.store().abort_turn(session, turn)?,
            })
        })
        .await?;
    Ok(convert::turn(turn))
}

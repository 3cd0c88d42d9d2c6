//! `planhost preset` (the tool-policy preset) and `planhost mode` (the permission mode), shown
//! or chosen, for the host's default or for one session (named by its id, or a unique prefix
//! or suffix of it).

use std::process::ExitCode;

use planhost_client::Client;
use planhost_core::ErrorCode;
use planhost_protocol::{Empty, SessionsFilter, methods};

use planhost_service::host::Paths;

use super::{APPROVER, Failure, READER, call, connect, short};

/// `planhost preset [NAME] [--session ID]`: the tool-policy preset, shown or chosen: the host's
/// default for every session without its own, or one session's.
pub(crate) fn preset(
    paths: &Paths,
    name: Option<planhost_core::PolicyPreset>,
    session: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let roles = if name.is_some() { APPROVER } else { READER };
    let mut c = connect(paths, roles)?;
    let session_id = session_of(&mut c, session)?;
    let default = |c: &mut Client| -> anyhow::Result<String> {
        let settings = call::<methods::SettingsGet>(c, Empty {})?;
        Ok(settings
            .default_policy_preset
            .map_or("host".to_owned(), |p| p.as_str().to_owned()))
    };
    match (name, session_id) {
        (None, None) => println!("host default preset: {}", default(&mut c)?),
        (None, Some(id)) => {
            let s = call::<methods::SessionsGet>(
                &mut c,
                planhost_protocol::SessionRef {
                    session_id: id.clone().into(),
                },
            )?;
            match s.policy_preset {
                Some(p) => println!("session {} preset: {p}", short(&id)),
                None => println!(
                    "session {} preset: the host default ({})",
                    short(&id),
                    default(&mut c)?
                ),
            }
        }
        (Some(p), None) => {
            let set = call::<methods::SettingsSet>(
                &mut c,
                planhost_protocol::SettingsPatch {
                    default_permission_mode: None,
                    default_shell: None,
                    default_policy_preset: Some(Some(p)),
                },
            )?;
            let now = set.default_policy_preset.map_or("host", |p| p.as_str());
            println!(
                "host default preset: {now} (from the next turn of every session without its own)"
            );
        }
        (Some(p), Some(id)) => {
            call::<methods::SessionsConfigure>(
                &mut c,
                planhost_protocol::ConfigureParams {
                    session_id: id.clone().into(),
                    permission_mode: None,
                    shell_id: None,
                    policy_preset: Some(Some(p)),
                    provider: None,
                    model: None,
                },
            )?;
            println!("session {} preset: {p} (from its next turn)", short(&id));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The session `typed` names (its id, or a unique prefix or suffix of it), if one was typed.
fn session_of(c: &mut Client, typed: Option<&str>) -> anyhow::Result<Option<String>> {
    let Some(typed) = typed else {
        return Ok(None);
    };
    let list = call::<methods::SessionsList>(
        c,
        SessionsFilter {
            include_ended: Some(true),
            workspace_root: None,
            limit: Some(10_000),
        },
    )?;
    let ids = list.items.iter().map(|s| s.id.as_str());
    match planhost_core::match_id(typed, ids) {
        planhost_core::IdMatch::One(id) => Ok(Some(id)),
        planhost_core::IdMatch::None => Err(Failure {
            code: ErrorCode::SessionNotFound,
            message: format!("no session {typed:?} (`planhost status` lists them)"),
            status: 1,
        }
        .into()),
        planhost_core::IdMatch::Ambiguous(all) => Err(Failure {
            code: ErrorCode::IdAmbiguous,
            message: format!("{typed:?} matches {}; type more of it", all.join(", ")),
            status: 1,
        }
        .into()),
    }
}

/// What a permission mode lets run without asking, in a person's words.
fn meaning(mode: planhost_core::TargetPermissionMode) -> &'static str {
    match mode {
        planhost_core::TargetPermissionMode::Ask => {
            "asks before every write, edit and command it cannot prove read-only"
        }
        planhost_core::TargetPermissionMode::AcceptEdits => {
            "writes and edits run; asks before commands it cannot prove read-only"
        }
        planhost_core::TargetPermissionMode::Auto => "everything runs without asking",
    }
}

/// `planhost mode [MODE] [--session ID]`: the permission mode outside Plan (Plan mode's own
/// rules hold whatever it is), shown or chosen: the host's default for every session that has
/// none, or one session's (idle only).
pub(crate) fn mode(
    paths: &Paths,
    mode: Option<planhost_core::TargetPermissionMode>,
    session: Option<&str>,
) -> anyhow::Result<ExitCode> {
    use planhost_core::{PermissionMode, TargetPermissionMode};
    let roles = if mode.is_some() { APPROVER } else { READER };
    let mut c = connect(paths, roles)?;
    let session_id = session_of(&mut c, session)?;
    let default = |c: &mut Client| -> anyhow::Result<TargetPermissionMode> {
        let settings = call::<methods::SettingsGet>(c, Empty {})?;
        Ok(settings
            .default_permission_mode
            .unwrap_or(TargetPermissionMode::Ask))
    };
    match (mode, session_id) {
        (None, None) => {
            let d = default(&mut c)?;
            println!("host default permission mode: {d} ({})", meaning(d));
        }
        (None, Some(id)) => {
            let s = call::<methods::SessionsGet>(
                &mut c,
                planhost_protocol::SessionRef {
                    session_id: id.clone().into(),
                },
            )?;
            let own = match s.permission_mode {
                PermissionMode::Ask => Some(TargetPermissionMode::Ask),
                PermissionMode::AcceptEdits => Some(TargetPermissionMode::AcceptEdits),
                PermissionMode::Auto => Some(TargetPermissionMode::Auto),
                PermissionMode::Inherit => None,
            };
            match own {
                Some(m) => println!(
                    "session {} permission mode: {m} ({})",
                    short(&id),
                    meaning(m)
                ),
                None => {
                    let d = default(&mut c)?;
                    println!(
                        "session {} permission mode: the host default, {d} ({})",
                        short(&id),
                        meaning(d)
                    );
                }
            }
        }
        (Some(m), None) => {
            call::<methods::SettingsSet>(
                &mut c,
                planhost_protocol::SettingsPatch {
                    default_permission_mode: Some(Some(m)),
                    default_shell: None,
                    default_policy_preset: None,
                },
            )?;
            println!(
                "host default permission mode: {m} ({}), from the next turn of every session \
                 without its own. Plan mode's rules hold whatever it is.",
                meaning(m)
            );
        }
        (Some(m), Some(id)) => {
            call::<methods::SessionsConfigure>(
                &mut c,
                planhost_protocol::ConfigureParams {
                    session_id: id.clone().into(),
                    permission_mode: Some(m.into()),
                    shell_id: None,
                    policy_preset: None,
                    provider: None,
                    model: None,
                },
            )?;
            println!(
                "session {} permission mode: {m} ({}), from its next turn",
                short(&id),
                meaning(m)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

//! `planhost preset`: the tool-policy preset, shown or chosen, for the host's default or for one
//! session (named by its id, or a unique prefix or suffix of it).

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
    let session_id = match session {
        None => None,
        Some(typed) => {
            let list = call::<methods::SessionsList>(
                &mut c,
                SessionsFilter {
                    include_ended: None,
                    workspace_root: None,
                    limit: Some(10_000),
                },
            )?;
            let ids = list.items.iter().map(|s| s.id.as_str());
            match planhost_core::match_id(typed, ids) {
                planhost_core::IdMatch::One(id) => Some(id),
                planhost_core::IdMatch::None => {
                    return Err(Failure {
                        code: ErrorCode::SessionNotFound,
                        message: format!("no session {typed:?} (`planhost status` lists them)"),
                        status: 1,
                    }
                    .into());
                }
                planhost_core::IdMatch::Ambiguous(all) => {
                    return Err(Failure {
                        code: ErrorCode::IdAmbiguous,
                        message: format!("{typed:?} matches {}; type more of it", all.join(", ")),
                        status: 1,
                    }
                    .into());
                }
            }
        }
    };
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

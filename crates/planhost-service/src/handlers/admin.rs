//! `app.*`, `settings.*`, `shells.catalog` and `audit.list`.

use std::sync::Arc;

use planhost_protocol::{
    AuditFilter, AuditLog, HealthResult, HealthStatus, PROTOCOL_VERSION, Settings, SettingsPatch,
    ShellCatalog, VersionResult,
};
use planhost_store::SettingKey;

use crate::Result;
use crate::convert;
use crate::service::Inner;
use crate::shells::Shells;

pub(crate) fn health(svc: &Inner) -> HealthResult {
    HealthResult {
        status: HealthStatus::Ok,
        pid: std::process::id(),
        uptime_ms: u64::try_from(svc.started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }
}

pub(crate) fn version(svc: &Inner) -> VersionResult {
    VersionResult {
        version: env!("CARGO_PKG_VERSION").into(),
        protocol_version: PROTOCOL_VERSION,
        schema_version: planhost_store::CURRENT_VERSION,
        sqlite_version: planhost_store::Store::sqlite_version().into(),
        state_dir: svc.state_dir.display().to_string(),
    }
}

pub(crate) async fn shells(svc: &Inner) -> Result<ShellCatalog> {
    let configured = svc.engine(Shells::default_setting).await?;
    Ok(svc.shells.catalog(configured))
}

pub(crate) async fn settings(svc: &Inner) -> Result<Settings> {
    let rows = svc.engine(|e| Ok(e.store().settings()?)).await?;
    let mut out = Settings {
        default_permission_mode: None,
        default_shell: None,
        default_policy_preset: None,
    };
    for (key, value) in rows {
        match key {
            SettingKey::DefaultPermissionMode => out.default_permission_mode = value.parse().ok(),
            SettingKey::DefaultShell => out.default_shell = value.parse().ok(),
            SettingKey::DefaultPolicyPreset => out.default_policy_preset = value.parse().ok(),
        }
    }
    Ok(out)
}

pub(crate) async fn set_settings(svc: &Inner, p: SettingsPatch) -> Result<Settings> {
    if let Some(Some(shell)) = p.default_shell {
        svc.shells.validate_setting(shell)?;
    }
    let cache = Arc::clone(&svc.policy);
    svc.engine(move |e| {
        // Host defaults feed every session's policy view: drop them all before replying.
        cache.clear();
        let changes = [
            (
                SettingKey::DefaultPermissionMode,
                p.default_permission_mode
                    .map(|v| v.map(planhost_core::TargetPermissionMode::as_str)),
            ),
            (
                SettingKey::DefaultShell,
                p.default_shell
                    .map(|v| v.map(planhost_core::ShellId::as_str)),
            ),
            (
                SettingKey::DefaultPolicyPreset,
                p.default_policy_preset
                    .map(|v| v.map(planhost_core::PolicyPreset::as_str)),
            ),
        ];
        for (key, value) in changes {
            if let Some(value) = value {
                e.store().set_setting(key, value)?;
            }
        }
        Ok(())
    })
    .await?;
    settings(svc).await
}

pub(crate) async fn audit(svc: &Inner, p: AuditFilter) -> Result<AuditLog> {
    // Decisions recorded in the journal and not yet in the log are written first, so the list
    // holds every decision answered before it was asked for. If they cannot be (a full disk),
    // they stay in the journal for the writer's next try, and the list shows what the log has.
    let (tx, rx) = tokio::sync::oneshot::channel();
    svc.audit.flush(move |written| {
        let _ = tx.send(written);
    });
    if let Ok(Err(error)) = rx.await {
        tracing::warn!(%error, "audit.list: decisions in the journal are not in the log yet");
    }
    let limit = u32::try_from(super::limit(p.limit)).unwrap_or(u32::MAX);
    let rows = svc
        .engine(move |e| Ok(e.store().audit(p.session_id.as_ref(), limit)?))
        .await?;
    Ok(AuditLog {
        items: rows.into_iter().map(convert::audit).collect(),
    })
}

/// `app.rotateWebToken`: the page that registered its rotation makes a new token.
pub(crate) fn rotate_web_token(svc: &Inner) -> Result<planhost_protocol::Empty> {
    let rotate = svc.web_token_rotation.get().ok_or_else(|| {
        crate::ServiceError::refused(
            planhost_core::ErrorCode::WebNotServed,
            "this host serves no web page; start it with `planhost serve --web`",
        )
    })?;
    rotate().map_err(crate::ServiceError::Internal)?;
    Ok(planhost_protocol::Empty {})
}

/// `app.startWeb`: the page, started in the running host if it serves none.
pub(crate) async fn start_web(svc: &Inner) -> Result<planhost_protocol::StartedWeb> {
    let start = svc.page_starter.get().ok_or_else(|| {
        crate::ServiceError::refused(
            planhost_core::ErrorCode::WebNotServed,
            "this host cannot start a web page (an app embeds it, or it serves stdio); start \
             one with `planhost serve --web`",
        )
    })?;
    let (url, started) = start().await.map_err(|message| {
        crate::ServiceError::refused(planhost_core::ErrorCode::WebNotServed, message)
    })?;
    Ok(planhost_protocol::StartedWeb { url, started })
}

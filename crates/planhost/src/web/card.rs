//! One plan card: whose it is (workspace, agent, session, which of its plans), what changed
//! (a summary, then numbered hunks), the answer (with Approve withheld when the plan file
//! changed on disk), and, once answered, its outcome with the plan folded.

use planhost_core::{ApprovalStatus, TargetPermissionMode};
use planhost_protocol::{
    ApprovalInfo, ChangeBase, ChangeBaseKind, DiffStatus, DiffTag, LineDiff, SessionInfo,
};

use super::i18n::Lang;
use super::markdown;
use super::page::{agent_name, error_line, esc, rfc3339};

/// One pending (or just answered) plan, with what the card shows.
#[derive(Debug)]
pub(crate) struct Card {
    pub(crate) approval: ApprovalInfo,
    /// The exact Markdown of the artifact.
    pub(crate) markdown: String,
    /// Whether the file on disk still holds those bytes.
    pub(crate) intact: bool,
    /// What changed, from each base the host found (`plans.changes`), the newest first.
    pub(crate) changes: Vec<ChangeBase>,
    /// The error of an answer that was refused (stable code, message).
    pub(crate) error: Option<(String, String)>,
    /// The session the plan is for (its workspace and agent), when the host still has it.
    pub(crate) session: Option<SessionInfo>,
    /// Which of the session's submitted plans this is (1 for the first).
    pub(crate) submission: usize,
}

/// Which workspace, agent, session and submission a card is about, and its own address.
fn card_context(lang: Lang, c: &Card) -> String {
    let a = &c.approval;
    let id = esc(a.proposal_id.as_str());
    let (workspace, agent) = c.session.as_ref().map_or_else(
        || ("?".to_owned(), "?"),
        |s| (esc(&s.workspace_root), agent_name(lang, s.agent)),
    );
    let session = a.session_id.as_str();
    format!(
        r#"<p class="context"><span class="label">{ws_l}</span> <code class="workspace">{workspace}</code>
<span class="agent">{agent}</span>
<span class="label">{session_l}</span> <code class="session" title="{session_full}">{session_short}</code>
<span class="submission" data-n="{n}">{submission}</span>
<a class="permalink" href="/approvals/{id}">{link}</a></p>"#,
        ws_l = lang.t("sessions.workspace"),
        session_l = lang.t("card.session"),
        session_full = esc(session),
        session_short = esc(&session[..session.len().min(8)]),
        n = c.submission,
        submission = esc(&lang.fill("card.submission", &[("n", &c.submission.to_string())])),
        link = lang.t("card.link"),
    )
}

/// One plan card. A pending one leads with what changed and its answer; an answered one is
/// folded under its title and outcome.
pub(crate) fn card(lang: Lang, csrf: &str, c: &Card) -> String {
    let a = &c.approval;
    let id = esc(a.proposal_id.as_str());
    let deadline = rfc3339(a.expires_at.0);
    let status = status_text(lang, a);
    let pending = a.status == ApprovalStatus::Pending;
    // A plan file that no longer holds the approved bytes cannot be approved: the page says
    // so before the person tries, and offers only Reject.
    let changed_on_disk = pending && !c.intact;
    let warning = if changed_on_disk {
        format!(
            r#"<p class="warning" role="alert" data-code="PLAN_ARTIFACT_CHANGED"><strong>{heading}</strong> {text}</p>"#,
            heading = lang.t("card.changed.heading"),
            text = esc(&lang.fill("card.changed.body", &[("path", &a.artifact_path)])),
        )
    } else {
        String::new()
    };
    let form = if pending {
        let approve = if changed_on_disk {
            String::new()
        } else {
            format!(
                r#"<label for="mode-{id}">{mode_l}</label>
<select id="mode-{id}" name="mode" aria-describedby="modes-{id}">
{modes}</select>
<button type="submit" name="action" value="approve" class="approve">{approve}</button>
"#,
                mode_l = lang.t("card.mode.label"),
                modes = mode_options(lang),
                approve = lang.t("card.approve"),
            )
        };
        let help = if changed_on_disk {
            String::new()
        } else {
            format!(
                r#"<p class="modes-help" id="modes-{id}">{}</p>"#,
                esc(lang.t("card.mode.help"))
            )
        };
        format!(
            r#"{help}<form class="resolve" method="post" action="/approvals/{id}" data-replace="card">
<input type="hidden" name="csrf" value="{csrf}">
<input type="hidden" name="version" value="{version}">
<input type="hidden" name="sha256" value="{sha}">
<div class="actions">{approve}<button type="submit" name="action" value="reject" class="reject">{reject}</button></div>
</form>"#,
            csrf = esc(csrf),
            version = a.version,
            sha = esc(&a.artifact_sha256),
            reject = lang.t("card.reject"),
        )
    } else {
        String::new()
    };
    let error = c.error.as_ref().map_or(String::new(), |(code, message)| {
        error_line(lang, code, message)
    });
    let diff = what_changed(lang, c);
    // With a diff to read first, the whole plan is folded below it.
    let plan_open = if c.changes.is_empty() { " open" } else { "" };
    let body = format!(
        r#"{diff}<details class="plan"{plan_open}><summary>{plan_l}</summary><div class="rendered">{rendered}</div></details>
<details class="raw"><summary>{raw_l}</summary><pre>{raw}</pre></details>
<p class="file"><span class="label">{path_l}</span> <code class="path">{path}</code>
<a class="artifact" href="/approvals/{id}/artifact" target="_blank" rel="noopener">{open_l}</a>
<button type="button" class="copy-path" data-copy="{path}">{copy_l}</button>
<span class="label">{sha_l}</span> <code class="sha256">{sha}</code></p>"#,
        plan_l = lang.t("card.plan"),
        rendered = markdown::render(&c.markdown),
        raw_l = lang.t("card.raw"),
        raw = esc(&c.markdown),
        path_l = lang.t("card.path"),
        path = esc(&a.artifact_path),
        open_l = lang.t("card.open_file"),
        copy_l = lang.t("card.copy_path"),
        sha_l = lang.t("card.sha256"),
        sha = esc(&a.artifact_sha256),
    );
    let when = if pending {
        format!(
            r#"<p class="when"><span class="label">{deadline_l}</span> <time class="deadline" datetime="{deadline}">{deadline}</time>
<span class="label">{left_l}</span> <span class="countdown" aria-live="off"></span></p>"#,
            deadline_l = lang.t("card.deadline"),
            left_l = lang.t("card.time_left"),
        )
    } else {
        let at = a.resolved_at.map_or(String::new(), |t| {
            format!(
                r#"<span class="label">{l}</span> <time class="local resolved-at" datetime="{t}">{t}</time>"#,
                l = lang.t("card.answered_at"),
                t = rfc3339(t.0)
            )
        });
        format!(r#"<p class="when">{at}</p>"#)
    };
    let head = format!(
        r#"<h3 class="title" id="title-{id}">{title}</h3>
{context}
<p class="question"><span class="label">{q_l}</span> {question}</p>
<p class="status" role="status"><span class="label">{status_l}</span> <span class="status-text">{status}</span></p>
{when}"#,
        title = esc(&a.title),
        context = card_context(lang, c),
        q_l = lang.t("card.question"),
        question = esc(&a.question),
        status_l = lang.t("card.status"),
    );
    let inner = if pending {
        format!("{head}\n{warning}{error}{form}\n{body}")
    } else {
        format!(
            r#"{head}
{error}<details class="answered"><summary>{show_l}</summary>
{body}
</details>"#,
            show_l = lang.t("card.show_answered"),
        )
    };
    format!(
        r#"<article class="card" id="card-{id}" data-approval-id="{id}" data-status="{status_v}" data-intact="{intact}" aria-labelledby="title-{id}" tabindex="-1">
{inner}
</article>"#,
        status_v = a.status.as_str(),
        intact = c.intact,
    )
}

fn status_text(lang: Lang, a: &ApprovalInfo) -> String {
    let who = a
        .resolved_by
        .as_ref()
        .map_or_else(|| "?".to_owned(), |r| r.client.clone());
    let code = a.error_code.map_or("", |c| c.as_str());
    let text = match a.status {
        ApprovalStatus::Pending => lang.t("status.pending").to_owned(),
        ApprovalStatus::Approved => lang.fill(
            "status.approved",
            &[
                ("who", &who),
                ("mode", a.target_permission_mode.map_or("?", |m| m.as_str())),
            ],
        ),
        ApprovalStatus::Rejected => match a.feedback.as_deref().filter(|f| !f.trim().is_empty()) {
            Some(reason) => lang.fill(
                "status.rejected.reason",
                &[("who", &who), ("reason", reason)],
            ),
            None => lang.fill("status.rejected", &[("who", &who)]),
        },
        ApprovalStatus::Expired => lang.fill("status.expired", &[("code", code)]),
        ApprovalStatus::Interrupted => lang.fill("status.interrupted", &[("code", code)]),
    };
    esc(&text)
}

/// The permission modes an approval may choose, from the one list (`TargetPermissionMode`),
/// `ask` (the default) selected.
fn mode_options(lang: Lang) -> String {
    TargetPermissionMode::ALL
        .iter()
        .map(|mode| {
            let label = lang.t(match mode {
                TargetPermissionMode::Ask => "card.mode.ask",
                TargetPermissionMode::AcceptEdits => "card.mode.accept_edits",
                TargetPermissionMode::Auto => "card.mode.auto",
            });
            let selected = if *mode == TargetPermissionMode::Ask {
                " selected"
            } else {
                ""
            };
            format!(
                "<option value=\"{}\"{selected}>{label}</option>\n",
                mode.as_str()
            )
        })
        .collect()
}

/// "What changed": from the previous plan and from the checkpoint the person was last shown,
/// whichever the person knew last first and open, the other folded (the host orders them and
/// leaves out a base with the same text as the one before it).
fn what_changed(lang: Lang, c: &Card) -> String {
    c.changes
        .iter()
        .enumerate()
        .map(|(i, base)| {
            let (kind, label) = match base.kind {
                ChangeBaseKind::Previous => ("previous", esc(lang.t("card.diff"))),
                ChangeBaseKind::Seen => {
                    let checkpoint = base.checkpoint.as_ref();
                    let client = checkpoint
                        .and_then(|c| c.seen_by.as_ref())
                        .map_or("?", |r| r.client.as_str());
                    let revision = checkpoint.map_or(String::new(), |c| c.revision.to_string());
                    let label = lang.fill(
                        "card.diff.seen",
                        &[("revision", &revision), ("client", client)],
                    );
                    ("seen", esc(&label))
                }
            };
            diff_html(lang, &label, kind, i == 0, &base.diff)
        })
        .collect()
}

/// One base's diff: a one-line summary ("+N −M lines", or no changes), then the hunks with
/// each line's old and new numbers; open, or folded under its label.
fn diff_html(lang: Lang, label: &str, kind: &str, open: bool, diff: &LineDiff) -> String {
    let mut lines = String::new();
    let summary = match diff.status {
        DiffStatus::Identical => esc(lang.t("card.diff.identical")),
        DiffStatus::TooLarge => esc(&lang.fill(
            "card.diff.too_large",
            &[
                ("before", &diff.base_lines.to_string()),
                ("after", &diff.plan_lines.to_string()),
            ],
        )),
        DiffStatus::Changed => {
            for hunk in &diff.hunks {
                lines.push_str(&format!(
                    "<span class=\"hunk\">@@ -{},{} +{},{} @@</span>\n",
                    hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines
                ));
                let (mut old, mut new) = (hunk.old_start, hunk.new_start);
                for line in &hunk.lines {
                    let text = esc(&line.text);
                    let (o, n) = match line.tag {
                        DiffTag::Delete => (Some(old), None),
                        DiffTag::Insert => (None, Some(new)),
                        DiffTag::Equal => (Some(old), Some(new)),
                    };
                    let num = |v: Option<u32>| v.map_or(String::new(), |v| v.to_string());
                    let numbers = format!(
                        r#"<span class="ln" aria-hidden="true">{:>4} {:>4}</span>"#,
                        num(o),
                        num(n)
                    );
                    lines.push_str(&match line.tag {
                        DiffTag::Delete => format!("<del>{numbers}- {text}</del>\n"),
                        DiffTag::Insert => format!("<ins>{numbers}+ {text}</ins>\n"),
                        DiffTag::Equal => format!("<span>{numbers}  {text}</span>\n"),
                    });
                    if o.is_some() {
                        old += 1;
                    }
                    if n.is_some() {
                        new += 1;
                    }
                }
            }
            esc(&lang.fill(
                "card.diff.summary",
                &[
                    ("inserted", &diff.inserted.to_string()),
                    ("deleted", &diff.deleted.to_string()),
                ],
            ))
        }
    };
    let pre = if lines.is_empty() {
        String::new()
    } else {
        format!("<pre>{lines}</pre>")
    };
    let summary = format!(
        r#"<p class="diff-summary" data-status="{status}" data-inserted="{ins}" data-deleted="{del}">{summary}</p>"#,
        status = diff.status.as_str(),
        ins = diff.inserted,
        del = diff.deleted,
    );
    if open {
        format!(
            r#"<section class="diff" data-base="{kind}" aria-label="{label}"><h4>{label}</h4>{summary}{pre}</section>"#
        )
    } else {
        format!(
            r#"<details class="diff" data-base="{kind}"><summary>{label}</summary>{summary}{pre}</details>"#
        )
    }
}

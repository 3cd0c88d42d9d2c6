//! One plan card: whose it is (workspace, agent, session, which of its plans), what changed
//! (a summary, then numbered hunks), the answer (with Approve withheld when the plan file
//! changed on disk), and, once answered, its outcome with the plan folded.

use planhost_core::{ApprovalStatus, TargetPermissionMode};
use planhost_protocol::{
    ApprovalInfo, ChangeBase, ChangeBaseKind, DiffHunk, DiffLine, DiffStatus, DiffTag, LineDiff,
    SessionInfo,
};

use maud::{Markup, html};

use super::i18n::Lang;
use super::markdown;
use super::page::{error_line, rfc3339, whose};

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
fn card_context(lang: Lang, c: &Card) -> Markup {
    let a = &c.approval;
    html! {
        p.context {
            (whose(lang, c.session.as_ref(), a.session_id.as_str())) " "
            span.submission data-n=(c.submission) {
                (lang.fill("card.submission", &[("n", &c.submission.to_string())]))
            } " "
            a.permalink href={ "/approvals/" (a.proposal_id.as_str()) } { (lang.t("card.link")) }
        }
    }
}

/// One plan card. A pending one leads with what changed and its answer; an answered one is
/// folded under its title and outcome.
pub(crate) fn card(lang: Lang, csrf: &str, c: &Card) -> Markup {
    let a = &c.approval;
    let id = a.proposal_id.as_str();
    let pending = a.status == ApprovalStatus::Pending;
    // A plan file that no longer holds the approved bytes cannot be approved: the page says
    // so before the person tries, and offers only Reject.
    let changed_on_disk = pending && !c.intact;
    let head = html! {
        h3.title id={ "title-" (id) } { (a.title) }
        (card_context(lang, c))
        p.question { span.label { (lang.t("card.question")) } " " (a.question) }
        p.status role="status" {
            span.label { (lang.t("card.status")) } " "
            span.status-text { (status_text(lang, a)) }
        }
        @if pending {
            @let deadline = rfc3339(a.expires_at.0);
            p.when {
                span.label { (lang.t("card.deadline")) } " "
                time.deadline datetime=(deadline) { (deadline) } " "
                span.label { (lang.t("card.time_left")) } " "
                span.countdown aria-live="off" {}
            }
        } @else {
            p.when {
                @if let Some(t) = a.resolved_at {
                    @let at = rfc3339(t.0);
                    span.label { (lang.t("card.answered_at")) } " "
                    time.local.resolved-at datetime=(at) { (at) }
                }
            }
        }
    };
    let error = c.error.as_ref().map_or_else(
        || html! {},
        |(code, message)| error_line(lang, code, message),
    );
    let body = html! {
        (what_changed(lang, c))
        // With a diff to read first, the whole plan is folded below it.
        details.plan open[c.changes.is_empty()] {
            summary { (lang.t("card.plan")) }
            div.rendered { (markdown::render(&c.markdown)) }
        }
        details.raw { summary { (lang.t("card.raw")) } pre { (c.markdown) } }
        p.file {
            span.label { (lang.t("card.path")) } " "
            code.path { (a.artifact_path) } " "
            a.artifact href={ "/approvals/" (id) "/artifact" } target="_blank" rel="noopener" {
                (lang.t("card.open_file"))
            } " "
            button.copy-path type="button" data-copy=(a.artifact_path) { (lang.t("card.copy_path")) } " "
            span.label { (lang.t("card.sha256")) } " "
            code.sha256 { (a.artifact_sha256) }
        }
    };
    html! {
        article.card id={ "card-" (id) } data-approval-id=(id) data-status=(a.status.as_str())
            data-intact=(c.intact) aria-labelledby={ "title-" (id) } tabindex="-1" {
            (head)
            @if pending {
                @if changed_on_disk {
                    p.warning role="alert" data-code="PLAN_ARTIFACT_CHANGED" {
                        strong { (lang.t("card.changed.heading")) } " "
                        (lang.fill("card.changed.body", &[("path", &a.artifact_path)]))
                    }
                }
                (error)
                @if !changed_on_disk {
                    p.modes-help id={ "modes-" (id) } { (lang.t("card.mode.help")) }
                }
                form.resolve method="post" action={ "/approvals/" (id) } data-replace="card" {
                    input type="hidden" name="csrf" value=(csrf);
                    input type="hidden" name="version" value=(a.version);
                    input type="hidden" name="sha256" value=(a.artifact_sha256);
                    div.actions {
                        @if !changed_on_disk {
                            label for={ "mode-" (id) } { (lang.t("card.mode.label")) } " "
                            select id={ "mode-" (id) } name="mode" aria-describedby={ "modes-" (id) } {
                                (mode_options(lang))
                            } " "
                            button.approve type="submit" name="action" value="approve" { (lang.t("card.approve")) } " "
                        }
                        button.reject type="submit" name="action" value="reject" { (lang.t("card.reject")) }
                    }
                }
                (body)
            } @else {
                (error)
                details.answered {
                    summary { (lang.t("card.show_answered")) }
                    (body)
                }
            }
        }
    }
}

fn status_text(lang: Lang, a: &ApprovalInfo) -> String {
    let who = a
        .resolved_by
        .as_ref()
        .map_or_else(|| "?".to_owned(), |r| r.client.clone());
    let code = a.error_code.map_or("", |c| c.as_str());
    match a.status {
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
    }
}

/// The permission modes an approval may choose, from the one list (`TargetPermissionMode`),
/// `ask` (the default) selected.
fn mode_options(lang: Lang) -> Markup {
    html! {
        @for mode in TargetPermissionMode::ALL {
            option value=(mode.as_str()) selected[*mode == TargetPermissionMode::Ask] {
                (lang.t(match mode {
                    TargetPermissionMode::Ask => "card.mode.ask",
                    TargetPermissionMode::AcceptEdits => "card.mode.accept_edits",
                    TargetPermissionMode::Auto => "card.mode.auto",
                }))
            }
        }
    }
}

/// "What changed": from the previous plan and from the checkpoint the person was last shown,
/// whichever the person knew last first and open, the other folded (the host orders them and
/// leaves out a base with the same text as the one before it).
fn what_changed(lang: Lang, c: &Card) -> Markup {
    html! {
        @for (i, base) in c.changes.iter().enumerate() {
            @let (kind, label) = match base.kind {
                ChangeBaseKind::Previous => ("previous", lang.t("card.diff").to_owned()),
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
                    ("seen", label)
                }
            };
            (diff_html(lang, &label, kind, i == 0, &base.diff))
        }
    }
}

/// One base's diff: a one-line summary ("+N −M lines", or no changes), then the hunks with
/// each line's old and new numbers; open, or folded under its label.
fn diff_html(lang: Lang, label: &str, kind: &str, open: bool, diff: &LineDiff) -> Markup {
    let summary_text = match diff.status {
        DiffStatus::Identical => lang.t("card.diff.identical").to_owned(),
        DiffStatus::TooLarge => lang.fill(
            "card.diff.too_large",
            &[
                ("before", &diff.base_lines.to_string()),
                ("after", &diff.plan_lines.to_string()),
            ],
        ),
        DiffStatus::Changed => lang.fill(
            "card.diff.summary",
            &[
                ("inserted", &diff.inserted.to_string()),
                ("deleted", &diff.deleted.to_string()),
            ],
        ),
    };
    let summary = html! {
        p.diff-summary data-status=(diff.status.as_str()) data-inserted=(diff.inserted)
            data-deleted=(diff.deleted) { (summary_text) }
        @if diff.status == DiffStatus::Changed && !diff.hunks.is_empty() {
            pre { (hunks(diff)) }
        }
    };
    html! {
        @if open {
            section.diff data-base=(kind) aria-label=(label) { h4 { (label) } (summary) }
        } @else {
            details.diff data-base=(kind) { summary { (label) } (summary) }
        }
    }
}

/// The hunks of a changed diff, one line each, with the old and new line numbers.
fn hunks(diff: &LineDiff) -> Markup {
    let num = |v: Option<u32>| v.map_or(String::new(), |v| v.to_string());
    html! {
        @for hunk in &diff.hunks {
            span.hunk {
                "@@ -" (hunk.old_start) "," (hunk.old_lines) " +" (hunk.new_start) "," (hunk.new_lines) " @@"
            } "\n"
            @for (line, old, new) in numbered(hunk) {
                @let numbers = html! {
                    span.ln aria-hidden="true" { (format!("{:>4} {:>4}", num(old), num(new))) }
                };
                @match line.tag {
                    DiffTag::Delete => del { (numbers) "- " (line.text) },
                    DiffTag::Insert => ins { (numbers) "+ " (line.text) },
                    DiffTag::Equal => span { (numbers) "  " (line.text) },
                }
                "\n"
            }
        }
    }
}

/// Each line of a hunk with its number in the old text (not for an insertion) and in the new
/// one (not for a deletion).
fn numbered(hunk: &DiffHunk) -> Vec<(&DiffLine, Option<u32>, Option<u32>)> {
    let (mut old, mut new) = (hunk.old_start, hunk.new_start);
    hunk.lines
        .iter()
        .map(|line| {
            let (o, n) = match line.tag {
                DiffTag::Delete => (Some(old), None),
                DiffTag::Insert => (None, Some(new)),
                DiffTag::Equal => (Some(old), Some(new)),
            };
            old += u32::from(o.is_some());
            new += u32::from(n.is_some());
            (line, o, n)
        })
        .collect()
}

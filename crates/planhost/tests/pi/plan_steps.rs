//! The Plan-mode steps and checks the scenarios share: the scripted plan, entering Plan,
//! submitting and reading the approval dialog, and failing with pi's (and the host's)
//! diagnostics.

use planhost_core::{Mode, SessionId};
use serde_json::Value;

use crate::harness::Host;
use planhost_test_support::pi_rpc::message_of;
use planhost_test_support::{PiSession, ToolEnd, UiRequest};

/// The approval dialog's options, in order.
pub(crate) const APPROVAL: [&str; 5] = [
    "Approve (Ask)",
    "Approve (Accept edits)",
    "Approve (Auto)",
    "Reject",
    "Preview the plan",
];

pub(crate) const TITLE: &str = "Rename the greeting";
/// In the plan's Markdown only: finds an execution turn's user message.
pub(crate) const MARKER: &str = "PLAN-MARKER-5c21";

pub(crate) fn plan_markdown() -> String {
    format!("# {TITLE}\n\n{MARKER}: in greeting.txt, replace `hello` with `goodbye`.\n")
}

/// Whether pi has shown a user message with the plan's marker: an execution turn's prompt.
pub(crate) fn has_execution_message(events: &[Value]) -> bool {
    events.iter().any(|e| {
        e["type"] == "message_end"
            && message_of(e).is_some_and(|(role, text)| role == "user" && text.contains(MARKER))
    })
}

/// Fails with pi's diagnostics unless `cond`.
pub(crate) fn check(pi: &PiSession, cond: bool, what: &str) {
    if !cond {
        panic!("{}", pi.failure(what));
    }
}

/// Fails with pi's and the host's diagnostics unless `cond`.
pub(crate) fn check_both(pi: &PiSession, host: &Host, cond: bool, what: &str) {
    if !cond {
        panic!(
            "{}\n  host stderr (hosts started by the test):\n{}",
            pi.failure(what),
            host.stderr()
        );
    }
}

pub(crate) fn blocked_with(pi: &PiSession, end: &ToolEnd, needle: &str) {
    check(
        pi,
        end.is_error && end.text.contains(needle),
        &format!(
            "{} should be blocked with {needle:?}; got is_error={} text={:?}",
            end.tool_name, end.is_error, end.text
        ),
    );
}

/// `/plan`, then the host session once it is in Plan; returns the host session id.
pub(crate) fn enter_plan(pi: &mut PiSession, host: &Host) -> SessionId {
    pi.prompt("/plan");
    let id = host.session_of(pi).id;
    host.wait_mode(&id, Mode::Plan);
    id
}

/// Prompts for the plan and returns the approval dialog, checking its options.
pub(crate) fn submit_and_get_dialog(pi: &mut PiSession) -> UiRequest {
    pi.prompt("Plan the rename of the greeting.");
    let dialog = pi.next_ui_request("the SubmitPlan approval", |r| {
        r.method == "select" && r.title.contains(TITLE)
    });
    check(
        pi,
        dialog.options == APPROVAL,
        &format!(
            "approval options {:?}, expected {APPROVAL:?}",
            dialog.options
        ),
    );
    dialog
}

/// Answers the approval dialog with Reject, then the reason dialog with `reason` (empty: none).
pub(crate) fn reject(pi: &mut PiSession, dialog: &UiRequest, reason: &str) {
    pi.answer(&dialog.id, "Reject");
    let why = pi.next_ui_request("the reject reason", |r| {
        r.method == "input" && r.title.contains("Why reject?")
    });
    pi.answer(&why.id, reason);
}

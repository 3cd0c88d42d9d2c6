//! The harness without the planhost extension: the install, the RPC driver, dialogs, blocking
//! and session resume, against the scripted model. These pass whatever state
//! `integrations/pi` is in.

use serde_json::json;

use crate::harness::{Fixture, on_both_versions};
use planhost_test_support::{PiSession, Reply, Responder, Version};

on_both_versions!(
    plain_pi_streams_the_scripted_reply_and_runs_its_own_bash,
    probe_extension_dialogs_notifications_and_blocks,
    session_dir_and_continue_resume_the_same_session,
);

/// pi alone streams the scripted reply, and a scripted `bash` call runs pi's built-in bash.
fn plain_pi_streams_the_scripted_reply_and_runs_its_own_bash(version: Version) {
    let fx = Fixture::new(version);
    fx.model.push(Reply::text("Hello from the scripted model."));
    let mut pi = PiSession::spawn(&fx.plain_options());
    pi.prompt("hi");
    let text = pi.wait_message("assistant", |t| t.contains("scripted model"));
    assert_eq!(
        text,
        "Hello from the scripted model.",
        "{}",
        pi.failure("reply")
    );
    pi.wait_idle();

    fx.model.push(Reply::tool(
        "bash",
        json!({ "command": "printf smoke > out.txt" }),
    ));
    fx.model.push(Reply::text("Wrote it."));
    pi.prompt("write out.txt");
    let bash = pi.wait_tool_end("bash");
    assert!(
        !bash.is_error,
        "{}",
        pi.failure(&format!("bash failed: {bash:?}"))
    );
    pi.wait_message("assistant", |t| t == "Wrote it.");
    pi.wait_idle();
    assert_eq!(fx.read("out.txt").as_deref(), Some("smoke"));
    let requests = fx.model.requests();
    assert_eq!(requests.len(), 3, "one request per model call");
    assert_eq!(requests[0]["model"], "m1");
}

/// A probe extension, written by the test: `/probe` opens a select and notifies the choice,
/// `/probe-close` opens one and closes it through an `AbortSignal` (as the planhost extension
/// does when an approval is answered elsewhere), and `write` is blocked with a reason.
const PROBE: &str = r#"
export default function (pi: any) {
  pi.registerCommand("probe", {
    description: "harness probe: a select",
    handler: async (args: string, ctx: any) => {
      const choice = await ctx.ui.select(`Probe ${args}`, ["Allow", "Deny"]);
      ctx.ui.notify(`probe picked ${choice}`, "info");
    },
  });
  pi.registerCommand("probe-close", {
    description: "harness probe: a select closed by its signal",
    handler: async (_args: string, ctx: any) => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 300);
      const choice = await ctx.ui.select("Closing probe", ["A", "B"], { signal: controller.signal });
      ctx.ui.notify(`probe closed with ${String(choice)}`, "info");
    },
  });
  pi.on("tool_call", async (event: any) => {
    if (event.toolName === "write") {
      return { block: true, reason: "PROBE_BLOCKED: writes are off" };
    }
  });
}
"#;

fn probe_extension_dialogs_notifications_and_blocks(version: Version) {
    let fx = Fixture::new(version);
    let probe = fx.scratch("probe.ts");
    fs_err::write(&probe, PROBE).unwrap();
    let mut pi = PiSession::spawn(&fx.plain_options().extension(&probe));
    let commands = pi.commands();
    assert!(
        commands.iter().any(|c| c == "probe"),
        "{}",
        pi.failure(&format!("commands: {commands:?}"))
    );

    // A dialog, answered.
    let id = pi.send_prompt("/probe one");
    let dialog = pi.next_ui_request("the probe select", |r| r.method == "select");
    assert_eq!(dialog.title, "Probe one");
    assert_eq!(dialog.options, ["Allow", "Deny"]);
    pi.answer(&dialog.id, "Allow");
    assert_eq!(
        pi.wait_notify(|m| m.starts_with("probe")),
        "probe picked Allow"
    );
    assert_eq!(pi.wait_response(&id)["success"], true);

    // A dialog the extension closes itself: pi tells an RPC client nothing, and a late answer
    // is ignored (its id is no longer pending).
    let id = pi.send_prompt("/probe-close");
    let dialog = pi.next_ui_request("the closing select", |r| r.title == "Closing probe");
    assert_eq!(
        pi.wait_notify(|m| m.starts_with("probe")),
        "probe closed with undefined"
    );
    assert_eq!(pi.wait_response(&id)["success"], true);
    let before = pi.mark();
    pi.answer(&dialog.id, "A");
    pi.state();
    let after: Vec<_> = pi
        .events_since(before)
        .into_iter()
        .filter(|e| e["type"] != "response")
        .collect();
    assert!(after.is_empty(), "a late answer produced {after:?}");

    // A blocked tool call: the reason is the tool's error result.
    let _model = Responder::start(&fx.model, |req| {
        if req.results_of("write") == 0 {
            Reply::tool("write", json!({ "path": "blocked.txt", "content": "no" }))
        } else {
            Reply::text("Blocked, as expected.")
        }
    });
    pi.prompt("write blocked.txt");
    let write = pi.wait_tool_end("write");
    assert!(write.is_error, "{write:?}");
    assert!(write.text.contains("PROBE_BLOCKED"), "{write:?}");
    pi.wait_idle();
    assert_eq!(fx.read("blocked.txt"), None);
}

/// `--session-dir` keeps the session; `-c` with the same dir resumes it (same id, same
/// messages): what the resume scenarios build on.
fn session_dir_and_continue_resume_the_same_session(version: Version) {
    let fx = Fixture::new(version);
    fx.model.push(Reply::text("First answer."));
    let mut first = PiSession::spawn(&fx.plain_options().session_dir(fx.session_dir()));
    let id = first.session_id();
    first.prompt("remember this");
    first.wait_idle();
    first.close();

    let mut second = PiSession::spawn(
        &fx.plain_options()
            .session_dir(fx.session_dir())
            .continue_session(),
    );
    assert_eq!(second.session_id(), id, "{}", second.failure("resume"));
    let messages = second.request_ok("get_messages", json!({}));
    // 1.6 lists its system message too.
    let roles: Vec<&str> = messages["messages"]
        .as_array()
        .map(|m| m.iter().filter_map(|m| m["role"].as_str()).collect())
        .unwrap_or_default();
    let conversation: Vec<&str> = roles.into_iter().filter(|r| *r != "system").collect();
    assert_eq!(
        conversation,
        ["user", "assistant"],
        "{}",
        second.failure("resumed messages")
    );
}

// Plan mode as a pi user lives it: the planning tools the model calls, `/plan`, the approval
// dialog (answerable from any approver; it closes when someone else answers or the deadline
// passes), the execution turn with the approved bytes, the context projection and capture.
// Every rule is the host's; this shows and forwards.
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";

import { HostError } from "./host.ts";
import type { ApprovalInfo, Event, ExitChoice, TargetPermissionMode } from "./protocol.d.ts";
import { hostTool, provenance } from "./gate.ts";
import { describe, type PlanhostSession, withCodes } from "./session.ts";

/** The approval dialog's choices, in order; Ask is the default (seed 000 §5). "Preview the
 * plan" shows the exact Markdown and comes back to the same dialog. */
export const APPROVAL_CHOICES: Array<[string, TargetPermissionMode | "reject" | "preview"]> = [
  ["Approve (Ask)", "ask"],
  ["Approve (Accept edits)", "accept-edits"],
  ["Approve (Auto)", "auto"],
  ["Reject", "reject"],
  ["Preview the plan", "preview"],
];

export const EXIT_LABELS: Record<ExitChoice, string> = {
  exitWithoutPublishing: "Exit without publishing",
  createOrUpdatePlan: "Create/Update plan",
  preview: "Preview",
  continuePlanning: "Continue planning",
  finalizeBeforeExit: "Finalize before exit",
};

function text(value: string) {
  return { content: [{ type: "text" as const, text: value }], details: {} };
}

/** A deadline as the person reads a clock: local time, with the date when it is not today. */
export function localTime(at: number, now = new Date()): string {
  const when = new Date(at);
  const time = when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  return when.toDateString() === now.toDateString() ? time : `${when.toLocaleDateString()} ${time}`;
}

/** The footer for the host's state of the session. */
export function statusText(mode: string, planState: string): string | undefined {
  if (mode !== "plan") return undefined;
  if (planState === "awaiting_approval") return "plan · awaiting approval (/plan to answer)";
  if (planState === "stopped") return "plan · no plan pending (prompt to plan again)";
  return `plan · ${planState.replace("_", " ")}`;
}

/** Shows what the host says about the session: the footer, and the tools of its mode. */
export async function applySession(
  s: PlanhostSession,
  pi: ExtensionAPI,
  ctx: ExtensionContext,
  session: { mode: string; planState: string },
): Promise<void> {
  ctx.ui.setStatus("planhost", statusText(session.mode, session.planState));
  present(s, ctx, session.mode === "plan");
  const changed = s.mode !== session.mode;
  s.mode = session.mode;
  if (changed || !s.toolsSynced) await syncTools(s, pi, session.mode);
}

/** The bundled Plan theme (seed 003): applied while Plan is active (again after `/reload`,
 * which starts the session anew), the theme from before restored on exit. Applied as a theme
 * object, so pi's saved theme setting never changes. */
export const PLAN_THEME = "planhost-plan";

export function present(s: PlanhostSession, ctx: ExtensionContext, planning: boolean): void {
  const ui: any = ctx.ui;
  if (!ctx.hasUI || typeof ui.getTheme !== "function" || typeof ui.setTheme !== "function") return;
  const current: string | undefined = ui.theme?.name;
  if (planning) {
    if (current === PLAN_THEME) return;
    const theme = ui.getTheme(PLAN_THEME);
    if (!theme) return;
    s.preTheme = current;
    ui.setTheme(theme);
  } else if (current === PLAN_THEME) {
    const back = s.preTheme ? ui.getTheme(s.preTheme) : undefined;
    if (back) ui.setTheme(back);
    s.preTheme = undefined;
  }
}

/** After a publication: the session takes the name the host derived from the plan's
 * `# Plan:` title, once (seed 003). */
export async function nameSession(s: PlanhostSession, pi: ExtensionAPI, ctx: ExtensionContext): Promise<void> {
  const sessionId = s.sessionId;
  if (!sessionId) return;
  const st = await s.call("plans.status", { sessionId, branchPath: s.branchPath(ctx) }).catch(() => undefined);
  const name = st?.sessionName;
  const api: any = pi;
  if (!name || typeof api.setSessionName !== "function") return;
  if (typeof api.getSessionName === "function" && api.getSessionName()) return;
  api.setSessionName(name);
}

/** Plan mode's tools while planning (the host computes them for the session's preset), the
 * pre-Plan selection once it has left (seed 004's drift rule). */
export async function syncTools(s: PlanhostSession, pi: ExtensionAPI, mode: string): Promise<void> {
  const sessionId = s.sessionId;
  if (!sessionId) return;
  s.toolsSynced = true;
  try {
    if (mode === "plan") {
      const applied = await s.call("toolset.apply", {
        sessionId,
        baseline: pi.getActiveTools(),
        offered: pi.getAllTools().map((t: any) => ({ name: t.name, provenance: provenance(pi, t.name) })),
      });
      if (applied.applied) pi.setActiveTools(applied.applied);
    } else {
      const restored = await s.call("toolset.restore", {
        sessionId,
        available: pi.getAllTools().map((t: any) => t.name),
        active: pi.getActiveTools(),
      });
      if (restored.tools) pi.setActiveTools(restored.tools);
    }
  } catch (error) {
    s.toolsSynced = false;
    s.ctx?.ui.notify(`planhost: could not set the tools of ${mode} mode: ${describe(error)}`, "warning");
  }
}

/** Tells the host which tools are active now: a change made outside planhost while planning is
 * a conflict that blocks approval until a person accepts it. */
export async function observeTools(s: PlanhostSession, pi: ExtensionAPI, ctx: ExtensionContext): Promise<void> {
  const sessionId = s.sessionId;
  if (!sessionId || s.mode !== "plan") return;
  const seen = await s.call("toolset.observe", { sessionId, tools: pi.getActiveTools() }).catch(() => undefined);
  if (seen?.conflict && !s.conflictReported) {
    s.conflictReported = true;
    ctx.ui.notify(
      "planhost: the active tools changed outside planhost while planning. Approval is blocked until you " +
        "settle it: type /plan to re-apply Plan mode's tools or keep the changed ones.",
      "warning",
    );
  }
}

/** What Plan mode holds the model to under each preset, in a person's words. */
export const PLAN_RULES: Record<string, string> = {
  host:
    "The model explores and plans: planhost blocks file writes and edits, and asks you (Deny first) " +
    "before any shell command it cannot prove read-only.",
  literal:
    "The model explores and plans: planhost blocks file writes and edits; shell commands follow the " +
    "permission mode (asked, unless it is auto).",
  strict: "Read-only: planhost blocks file writes, edits and every shell command.",
  explore:
    "The model explores and plans: planhost blocks file writes and edits; shell commands follow the " +
    "permission mode, read-only ones unasked.",
};

/** The open approval dialog, if any. */
let dialog: { proposalId: string; controller: AbortController } | undefined;

/** The host's words for a plan that waits (from its submission), said when the dialog is dismissed. */
const waiting = new Map<string, string>();

/** Shows the approval of `approval` until a person answers it here or anywhere else. */
export async function showApproval(s: PlanhostSession, ctx: ExtensionContext, approval: ApprovalInfo): Promise<void> {
  if (!ctx.hasUI || dialog?.proposalId === approval.proposalId) return;
  const controller = new AbortController();
  dialog = { proposalId: approval.proposalId, controller };
  try {
    for (;;) {
      // The host refuses to approve a file that changed after SubmitPlan; say so before asking.
      const detail = await s.call("plans.get", { proposalId: approval.proposalId }).catch(() => undefined);
      if (detail && detail.approval.status !== "pending") return;
      const changed =
        detail && !detail.artifactIntact
          ? `\nWARNING: ${approval.artifactRelativePath} changed on disk after it was submitted; ` +
            `approving is refused [PLAN_ARTIFACT_CHANGED]. Reject it, or ask for the plan again.`
          : "";
      // pi's dialog shows the live time left itself; the deadline is said once, in local time.
      const title =
        `Approve the plan "${approval.title}"?\n${approval.question}\n` +
        `File: ${approval.artifactPath}\nDeadline: ${localTime(approval.expiresAt)}` +
        changed;
      const left = approval.expiresAt - Date.now();
      if (left <= 0) return;
      const choice = await ctx.ui.select(
        title,
        APPROVAL_CHOICES.map(([label]) => label),
        { signal: controller.signal, timeout: left },
      );
      if (controller.signal.aborted || choice === undefined) {
        if (!controller.signal.aborted && Date.now() < approval.expiresAt) {
          // The host's sentence, as Claude Code's person reads it; a plan submitted before
          // this pi started (or the host restarted) has none here, and the deadline says enough.
          ctx.ui.notify(
            waiting.get(approval.proposalId) ??
              `planhost: the plan "${approval.title}" is still waiting for your answer (deadline ${localTime(approval.expiresAt)}). ` +
                "Type /plan to answer it in pi.",
            "info",
          );
        }
        return;
      }
      const action = APPROVAL_CHOICES.find(([label]) => label === choice)?.[1];
      if (!action) return;
      if (action === "preview") {
        ctx.ui.notify(`${approval.artifactRelativePath}:\n\n${detail?.markdown ?? "(the plan could not be read)"}`, "info");
        continue;
      }
      let feedback: string | undefined;
      if (action === "reject") {
        const reason = await ctx.ui.input("Why reject? The model sees your reason (leave empty to say nothing).", "", {
          signal: controller.signal,
        });
        if (controller.signal.aborted) return;
        feedback = reason?.trim() ? reason.trim() : undefined;
      }
      await s.call("plans.resolve", {
        proposalId: approval.proposalId,
        sessionId: approval.sessionId,
        turnId: approval.turnId,
        toolCallId: approval.toolCallId,
        version: approval.version,
        artifactSha256: approval.artifactSha256,
        action: action === "reject" ? "reject" : "approve",
        targetPermissionMode: action === "reject" ? undefined : action,
        feedback,
      });
      return;
    }
  } catch (error) {
    const message =
      error instanceof HostError && error.code === "PLAN_ARTIFACT_CHANGED"
        ? `the plan file ${approval.artifactRelativePath} changed on disk after it was submitted, so it was not approved: ${describe(error)}`
        : describe(error);
    ctx.ui.notify(`planhost: ${message}`, "error");
  } finally {
    if (dialog?.controller === controller) dialog = undefined;
  }
}

/** Sends `text` to the model as the person's next message: now when pi is idle, after the
 * current run otherwise. */
function toModel(s: PlanhostSession, pi: ExtensionAPI, message: string): void {
  const ctx = s.ctx;
  if (ctx && !ctx.isIdle()) pi.sendUserMessage(message, { deliverAs: "followUp" });
  else pi.sendUserMessage(message);
}

/** Starts the queued execution (the host claims it for this prompt) and the execution run,
 * with the approved plan's exact bytes in the host's words. */
async function startExecution(s: PlanhostSession, pi: ExtensionAPI, _executionId: string): Promise<void> {
  s.requireSession();
  const ctx = s.ctx;
  if (!ctx) throw new HostError("SESSION_NOT_FOUND", "pi's session is not ready");
  const result = await s.event(ctx, { kind: "promptSubmitted" });
  const claimed = result.execution;
  if (!claimed || !result.context) {
    throw new HostError("EXECUTION_STATE_INVALID", result.directive.reason ?? "the approved execution could not start");
  }
  s.execution = { executionId: claimed.execution.executionId, turnId: claimed.turn.id };
  // Plan mode has ended: the pre-Plan tools come back before the execution run starts.
  await syncTools(s, pi, "agent");
  toModel(s, pi, result.context);
}

/** Starts a queued execution, reporting a failure to the person. */
export async function claimQueued(s: PlanhostSession, pi: ExtensionAPI, executionId: string): Promise<void> {
  s.queuedExecution = undefined;
  try {
    await startExecution(s, pi, executionId);
  } catch (error) {
    s.ctx?.ui.notify(`planhost: could not start the approved execution: ${describe(error)}`, "error");
  }
}

/** An approval ended (answered on any surface, expired, or interrupted): the host says what
 * the person and the model are told (its own words), once; a rejection's note goes to the
 * model as the person's next message. */
async function approvalEnded(s: PlanhostSession, pi: ExtensionAPI, proposalId: string): Promise<void> {
  if (s.endedApprovals.has(proposalId)) return;
  s.endedApprovals.add(proposalId);
  const ctx = s.ctx;
  if (!ctx) return;
  const result = await s.event(ctx, { kind: "planAnswered", proposalId }).catch(() => undefined);
  if (!result) return;
  if (result.notice) ctx.ui.notify(result.notice.text, result.notice.level);
  if (result.context) toModel(s, pi, result.context);
}

/** Reacts to the host's events for this session: dialogs close, executions start, status. */
export function watch(s: PlanhostSession, pi: ExtensionAPI): void {
  s.onReconnect.push(() => {
    const ctx = s.ctx;
    if (!ctx) return;
    void (async () => {
      const sessionId = s.requireSession();
      const session = await s.call("sessions.get", { sessionId });
      await applySession(s, pi, ctx, session);
      await reportInterrupted(s, pi, ctx);
      if (session.pendingApproval) void showApproval(s, ctx, session.pendingApproval);
    })().catch(() => {});
  });
  s.onEvent.push((event: Event) => {
    const ctx = s.ctx;
    if (event.kind === "approvalChanged" && event.status !== "pending") {
      if (dialog?.proposalId === event.proposalId) {
        dialog.controller.abort();
        dialog = undefined;
      }
      if (event.status === "interrupted") {
        if (ctx) void reportInterrupted(s, pi, ctx).catch(() => {});
      } else {
        void approvalEnded(s, pi, event.proposalId);
      }
    }
    if (event.kind === "executionChanged" && event.state === "queued") {
      // The host allows one turn at a time: while a run is on, claim when it has ended.
      if (s.turnId) s.queuedExecution = event.executionId;
      else void claimQueued(s, pi, event.executionId);
    }
    if (event.kind === "sessionUpdated" && ctx) {
      void applySession(s, pi, ctx, event);
    }
  });
}

/** The custom entry that records an interrupted approval the person was told about. */
const REPORTED = "planhost-reported";

/** What the session's last approval became, if the host ended it while nobody was looking (a
 * restart interrupts pending approvals; nothing is replayed). Said once per approval. */
export async function reportInterrupted(s: PlanhostSession, pi: ExtensionAPI, ctx: ExtensionContext): Promise<void> {
  const sessionId = s.sessionId;
  if (!sessionId) return;
  const latest = (await s.call("plans.list", { sessionId, limit: 1 })).items[0];
  if (latest?.status !== "interrupted") return;
  if (dialog?.proposalId === latest.proposalId) {
    dialog.controller.abort();
    dialog = undefined;
  }
  const told = ctx.sessionManager
    .getEntries()
    .some((e: any) => e?.type === "custom" && e.customType === REPORTED && e.data?.proposalId === latest.proposalId);
  if (told || s.endedApprovals.has(latest.proposalId)) return;
  pi.appendEntry(REPORTED, { proposalId: latest.proposalId });
  await approvalEnded(s, pi, latest.proposalId);
}

/** After a run: show the approval it raised, if one is pending. */
export async function afterRun(s: PlanhostSession, pi: ExtensionAPI, ctx: ExtensionContext): Promise<void> {
  const sessionId = s.sessionId;
  if (!sessionId) return;
  const session = await s.call("sessions.get", { sessionId });
  if (session.pendingApproval) void showApproval(s, ctx, session.pendingApproval);
  else if (s.offerReview && ctx.hasUI) {
    s.offerReview = false;
    await reviewHandoff(s, pi, ctx);
  }
}

/** A plan waiting for an answer: say so and open its dialog again. True when one is pending. */
export async function reopenPending(s: PlanhostSession, ctx: ExtensionContext, why: string): Promise<boolean> {
  const sessionId = s.sessionId;
  if (!sessionId) return false;
  const session = await s.call("sessions.get", { sessionId });
  const pending = session.pendingApproval;
  if (!pending) return false;
  ctx.ui.notify(
    `${why}The plan "${pending.title}" is waiting for your approval (deadline ${localTime(pending.expiresAt)}). ` +
      (ctx.hasUI ? "Answer it in the dialog." : "Answer it with `planhost approve` or `planhost reject`, or on the web page."),
    "info",
  );
  void showApproval(s, ctx, pending);
  return true;
}

/** The text of a message's content (a string, or its text parts). */
export function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part: any) => part?.type === "text")
    .map((part: any) => String(part.text ?? ""))
    .join("\n");
}

/** Seed 004's handoff: a ready plan (a captured `<proposed_plan>`, or any checkpoint) reviewed
 * in a dialog with a second confirmation, then handed to execution in this session. */
export async function reviewHandoff(s: PlanhostSession, pi: ExtensionAPI, ctx: ExtensionContext): Promise<void> {
  const sessionId = s.requireSession();
  const branchPath = s.branchPath(ctx);
  const st = await s.call("plans.status", { sessionId, branchPath });
  if (st.phase === "handoff_pending") return reviewPendingHandoff(s, pi, ctx);
  if (!st.active || st.phase !== "ready") {
    ctx.ui.notify(
      st.active
        ? "No plan is ready to hand off yet: the model proposes one in a <proposed_plan> block (or saves it with update_plan_draft)."
        : "Plan mode is not on, so there is no plan to hand off. Type /plan first.",
      "info",
    );
    return;
  }
  if (!ctx.hasUI) {
    ctx.ui.notify("Handing a plan to execution needs pi's interactive UI (a review and a second confirmation).", "warning");
    return;
  }
  if (st.toolConflict) {
    ctx.ui.notify(
      "The active tools changed outside planhost while planning, so a handoff is blocked [PLAN_TOOLS_CONFLICT]. Run /plan again to re-apply Plan mode's tools.",
      "warning",
    );
    return;
  }
  const latest = await s.call("checkpoints.latest", { sessionId, branchPath });
  const revision = latest.checkpoint.revision;
  for (;;) {
    const pick = await ctx.ui.select(`The plan is ready (revision ${revision}). Hand it to execution?`, [
      "Review the plan",
      "Execute it",
      "Keep planning",
    ]);
    if (pick === "Review the plan") {
      ctx.ui.notify(`Revision ${revision}:\n\n${latest.markdown}`, "info");
      await markSeen(s, ctx, sessionId, latest.checkpoint);
      continue;
    }
    if (pick !== "Execute it") return;
    const sure = await ctx.ui.confirm(
      `Execute revision ${revision} now?`,
      "Plan mode ends and the model carries out this exact plan in this session; files may change.",
    );
    if (!sure) return;
    break;
  }
  const info = await s.call("handoff.approve", { sessionId, branchPath });
  await dispatchHandoff(s, pi, ctx, info.token ?? "", latest.checkpoint.revision, latest.checkpoint.sha256, latest.markdown);
}

/** A handoff still pending (the run never started, or pi or the host restarted): never sent
 * by itself; the person confirms it again or cancels it. */
async function reviewPendingHandoff(s: PlanhostSession, pi: ExtensionAPI, ctx: ExtensionContext): Promise<void> {
  const sessionId = s.requireSession();
  if (!ctx.hasUI) {
    ctx.ui.notify("A plan handoff is pending; confirming it needs pi's interactive UI. /plan --cancel-handoff keeps planning.", "info");
    return;
  }
  const pick = await ctx.ui.select("A plan handoff is pending and was not sent. Confirm it again?", [
    "Confirm and execute",
    "Cancel the handoff",
    "Decide later",
  ]);
  if (pick === "Cancel the handoff") return cancelHandoff(s, ctx);
  if (pick !== "Confirm and execute") return;
  const info = await s.call("handoff.retry", { sessionId });
  const latest = await s.call("checkpoints.latest", { sessionId, branchPath: s.branchPath(ctx) });
  await dispatchHandoff(s, pi, ctx, info.token ?? "", latest.checkpoint.revision, latest.checkpoint.sha256, latest.markdown);
}

export async function cancelHandoff(s: PlanhostSession, ctx: ExtensionContext): Promise<void> {
  const sessionId = s.requireSession();
  s.handoff = undefined;
  await s.call("handoff.cancel", { sessionId });
  ctx.ui.notify("The handoff was cancelled; Plan mode stays on and the plan is kept.", "info");
}

/** Reads the pending handoff back from the host, then sends the execution prompt; the matching
 * `message_start` accepts it (index.ts). */
async function dispatchHandoff(
  s: PlanhostSession,
  pi: ExtensionAPI,
  ctx: ExtensionContext,
  token: string,
  revision: number,
  sha256: string,
  markdown: string,
): Promise<void> {
  const sessionId = s.requireSession();
  const back = await s.call("plans.status", { sessionId, branchPath: s.branchPath(ctx) });
  if (back.phase !== "handoff_pending" || back.handoffRestarted || !token) {
    ctx.ui.notify("planhost could not confirm the pending handoff, so nothing was sent. /plan --review to try again.", "error");
    return;
  }
  const text =
    `The person approved this plan (revision ${revision}, sha256 ${sha256}) for execution. ` +
    `Plan mode has ended: carry out this approved plan now.\n\n${markdown}`;
  s.handoff = { token, text };
  try {
    toModel(s, pi, text);
  } catch (error) {
    s.handoff = undefined;
    await s.call("handoff.cancel", { sessionId }).catch(() => {});
    ctx.ui.notify(`planhost: the execution prompt could not be sent, so Plan mode stays on: ${describe(error)}`, "error");
  }
}

/** The run that carries a dispatched handoff started with this user message: accept it (the
 * host ends Plan mode and begins the run's turn, through `begin` with the handoff's token) when
 * it is the prompt sent, cancel it otherwise. The token when it was accepted. */
export async function settleHandoff(
  s: PlanhostSession,
  pi: ExtensionAPI,
  ctx: ExtensionContext,
  message: any,
  begin: (token: string) => Promise<void>,
): Promise<string | undefined> {
  const pending = s.handoff;
  const sessionId = s.sessionId;
  if (!pending || !sessionId || message?.role !== "user") return undefined;
  s.handoff = undefined;
  if (messageText(message.content) !== pending.text) {
    await s.call("handoff.cancel", { sessionId }).catch(() => {});
    await syncTools(s, pi, "plan");
    ctx.ui.notify("The plan handoff did not start (another message came first); Plan mode stays on. /plan --review to try again.", "warning");
    return undefined;
  }
  await begin(pending.token);
  if (!s.turnId) {
    await s.call("handoff.cancel", { sessionId }).catch(() => {});
    await syncTools(s, pi, "plan");
    ctx.ui.notify("planhost: the handoff was not accepted, so Plan mode stays on and this run stops.", "error");
    ctx.abort();
    return undefined;
  }
  s.mode = "agent";
  ctx.ui.setStatus("planhost", undefined);
  present(s, ctx, false);
  await syncTools(s, pi, "agent");
  return pending.token;
}

export function registerPlanTools(pi: ExtensionAPI, s: PlanhostSession): void {
  const position = (toolCallId: string) => s.batches.get(toolCallId) ?? { index: 0, size: 1 };
  pi.registerTool({
    name: hostTool("EnterPlanMode"),
    label: "Enter Plan mode",
    description:
      "Switch this session to Plan mode: explore and write a plan; files cannot be changed until a person approves it. Call it alone.",
    parameters: Type.Object({}),
    async execute() {
      // The host entered Plan when it allowed this call (its proposal).
      return withCodes(async () => {
        s.requireSession();
        return text("Plan mode is on. Explore, then submit the plan with SubmitPlan (alone in its batch).");
      });
    },
  });
  pi.registerTool({
    name: hostTool("SubmitPlan"),
    label: "Submit plan",
    description:
      "Submit the finished plan for a person's approval: a short title, the complete plan in Markdown, and the question to ask. Call it alone; then stop and wait for the answer.",
    parameters: Type.Object({
      title: Type.String({ description: "A short label for the plan" }),
      markdown: Type.String({ description: "The complete plan, in Markdown" }),
      question: Type.String({ description: "What the person is asked, e.g. 'Implement this plan?'" }),
    }),
    async execute(toolCallId, params, _signal, _onUpdate, ctx) {
      return withCodes(async () => {
        s.requireSession();
        const { index, size } = position(toolCallId);
        const result = await s.event(ctx, {
          kind: "planOffered",
          callId: toolCallId,
          batchIndex: index,
          batchSize: size,
          title: params.title,
          markdown: params.markdown,
          question: params.question,
        });
        if (result.directive.kind === "deny") {
          throw new HostError(result.directive.code ?? "PLAN_APPROVAL_ALREADY_PENDING", result.directive.reason ?? "the plan was not submitted");
        }
        if (result.approval && result.notice) waiting.set(result.approval.proposalId, result.notice.text);
        return text(result.context ?? "The plan is waiting for a person's approval. Stop here; do not start the work.");
      });
    },
  });
  pi.registerTool({
    name: hostTool("update_plan_draft"),
    label: "Update plan draft",
    description:
      "Save the complete current plan (never a patch) as a checkpoint. Pass the revision you last saw (0 for the first).",
    parameters: Type.Object({
      markdown: Type.String({ description: "The complete plan" }),
      expectedRevision: Type.Integer({ description: "The revision you last saw; 0 for none" }),
    }),
    async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
      return withCodes(async () => {
        s.requireSession();
        const saved = await s.event(ctx, {
          kind: "draftWritten",
          markdown: params.markdown,
          expectedRevision: params.expectedRevision,
        });
        return text(saved.context ?? `Saved as revision ${saved.checkpoint?.revision}.`);
      });
    },
  });
  pi.registerTool({
    name: hostTool("read_plan"),
    label: "Read plan",
    description: "Read the latest plan checkpoint of this branch, exactly as saved.",
    parameters: Type.Object({}),
    async execute(_toolCallId, _params, _signal, _onUpdate, ctx) {
      try {
        const latest = await s.call("checkpoints.latest", {
          sessionId: s.requireSession(),
          branchPath: s.branchPath(ctx),
        });
        return text(`Revision ${latest.checkpoint.revision}:\n\n${latest.markdown}`);
      } catch (error) {
        return text(`No plan yet: ${describe(error)}`);
      }
    },
  });
}

/** The person was shown this checkpoint: a later plan's card shows what changed since. */
export async function markSeen(
  s: PlanhostSession,
  ctx: ExtensionContext,
  sessionId: string,
  checkpoint: { checkpointId: number; sha256: string },
): Promise<void> {
  if (!ctx.hasUI) return;
  await s
    .call("checkpoints.seen", { sessionId, checkpointId: checkpoint.checkpointId, sha256: checkpoint.sha256 })
    .catch(() => {});
}


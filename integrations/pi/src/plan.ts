// Plan mode as a pi user lives it: the planning tools the model calls, `/plan`, the approval
// dialog (answerable from any approver; it closes when someone else answers or the deadline
// passes), the execution turn with the approved bytes, the context projection and capture.
// Every rule is the host's; this shows and forwards.
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";

import { HostError } from "./host.ts";
import type { ApprovalInfo, Event, ExitChoice, TargetPermissionMode } from "./protocol.d.ts";
import { describe, type PlanhostSession, withCodes } from "./session.ts";

/** The approval dialog's choices, in order; Ask is the default (seed 000 §5). */
export const APPROVAL_CHOICES: Array<[string, TargetPermissionMode | "reject"]> = [
  ["Approve (Ask)", "ask"],
  ["Approve (Accept edits)", "accept-edits"],
  ["Approve (Auto)", "auto"],
  ["Reject", "reject"],
];

const EXIT_LABELS: Record<ExitChoice, string> = {
  exitWithoutPublishing: "Exit without publishing",
  createOrUpdatePlan: "Create/Update plan",
  preview: "Preview",
  continuePlanning: "Continue planning",
  finalizeBeforeExit: "Finalize before exit",
};

function text(value: string) {
  return { content: [{ type: "text" as const, text: value }], details: {} };
}

function minutesLeft(expiresAt: number): string {
  const ms = Math.max(0, expiresAt - Date.now());
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.floor((ms % 60_000) / 1000);
  return `${minutes}m ${seconds}s`;
}

/** The open approval dialog, if any. */
let dialog: { proposalId: string; controller: AbortController } | undefined;

/** Shows the approval of `approval` until a person answers it here or anywhere else. */
export async function showApproval(s: PlanhostSession, ctx: ExtensionContext, approval: ApprovalInfo): Promise<void> {
  if (!ctx.hasUI || dialog?.proposalId === approval.proposalId) return;
  const controller = new AbortController();
  dialog = { proposalId: approval.proposalId, controller };
  try {
    // The host refuses to approve a file that changed after SubmitPlan; say so before asking.
    const detail = await s.call("plans.get", { proposalId: approval.proposalId }).catch(() => undefined);
    const changed =
      detail && !detail.artifactIntact
        ? `\nWARNING: ${approval.artifactRelativePath} changed on disk after it was submitted; ` +
          `approving is refused [PLAN_ARTIFACT_CHANGED]. Reject it, or ask for the plan again.`
        : "";
    const title =
      `Approve the plan "${approval.title}"?\n${approval.question}\n` +
      `File: ${approval.artifactPath}\nExpires in ${minutesLeft(approval.expiresAt)} (at ${new Date(approval.expiresAt).toISOString()})` +
      changed;
    const choice = await ctx.ui.select(
      title,
      APPROVAL_CHOICES.map(([label]) => label),
      { signal: controller.signal, timeout: Math.max(1, approval.expiresAt - Date.now()) },
    );
    if (controller.signal.aborted || choice === undefined) return;
    const action = APPROVAL_CHOICES.find(([label]) => label === choice)?.[1];
    if (!action) return;
    await s.call("plans.resolve", {
      proposalId: approval.proposalId,
      sessionId: approval.sessionId,
      turnId: approval.turnId,
      toolCallId: approval.toolCallId,
      version: approval.version,
      artifactSha256: approval.artifactSha256,
      action: action === "reject" ? "reject" : "approve",
      targetPermissionMode: action === "reject" ? undefined : action,
    });
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

/** Claims a queued execution and starts the execution run with the approved plan's bytes. */
async function startExecution(s: PlanhostSession, pi: ExtensionAPI, executionId: string): Promise<void> {
  const sessionId = s.requireSession();
  const claimed = await s.call("executions.claim", { sessionId, executionId });
  s.execution = { executionId, turnId: claimed.turn.id };
  const message =
    `The plan "${claimed.title}" was approved (permission mode ${claimed.execution.permissionMode}). ` +
    `Carry it out now. This is the approved plan, exactly as submitted ` +
    `(${claimed.artifactPath}, sha256 ${claimed.sha256}):\n\n${claimed.markdown}`;
  const ctx = s.ctx;
  if (ctx && !ctx.isIdle()) pi.sendUserMessage(message, { deliverAs: "followUp" });
  else pi.sendUserMessage(message);
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

/** Reacts to the host's events for this session: dialogs close, executions start, status. */
export function watch(s: PlanhostSession, pi: ExtensionAPI): void {
  s.onReconnect.push(() => {
    const ctx = s.ctx;
    if (ctx) void reportInterrupted(s, ctx).catch(() => {});
  });
  s.onEvent.push((event: Event) => {
    const ctx = s.ctx;
    if (event.kind === "approvalChanged" && event.status !== "pending") {
      if (dialog?.proposalId === event.proposalId) {
        dialog.controller.abort();
        dialog = undefined;
        const who = event.resolvedBy ? `by ${event.resolvedBy.client}` : "";
        const why = event.errorCode ? ` (${event.errorCode})` : "";
        ctx?.ui.notify(`planhost: the plan approval was ${event.status} ${who}${why}`.trim(), event.status === "approved" ? "info" : "warning");
      }
    }
    if (event.kind === "executionChanged" && event.state === "queued") {
      // The host allows one turn at a time: while a run is on, claim when it has ended.
      if (s.turnId) s.queuedExecution = event.executionId;
      else void claimQueued(s, pi, event.executionId);
    }
    if (event.kind === "sessionUpdated" && ctx) {
      ctx.ui.setStatus("planhost", event.mode === "plan" ? `plan · ${event.planState.replace("_", " ")}` : undefined);
    }
  });
}

/** What the session's last approval became, if the host ended it while nobody was looking (a
 * restart interrupts pending approvals; nothing is replayed). */
export async function reportInterrupted(s: PlanhostSession, ctx: ExtensionContext): Promise<void> {
  const sessionId = s.sessionId;
  if (!sessionId) return;
  const latest = (await s.call("plans.list", { sessionId, limit: 1 })).items[0];
  if (latest?.status === "interrupted") {
    if (dialog?.proposalId === latest.proposalId) {
      dialog.controller.abort();
      dialog = undefined;
    }
    ctx.ui.notify(
      `planhost: the approval of "${latest.title}" was interrupted (${latest.errorCode ?? "HOST_RESTARTED"}): ` +
        "the host restarted, and nothing was replayed. Submit the plan again to ask anew.",
      "warning",
    );
  }
}

/** After a run: show the approval it raised, if one is pending. */
export async function afterRun(s: PlanhostSession, ctx: ExtensionContext): Promise<void> {
  const sessionId = s.sessionId;
  if (!sessionId) return;
  const session = await s.call("sessions.get", { sessionId });
  if (session.pendingApproval) void showApproval(s, ctx, session.pendingApproval);
}

export function registerPlanTools(pi: ExtensionAPI, s: PlanhostSession): void {
  const position = (toolCallId: string) => s.batches.get(toolCallId) ?? { index: 0, size: 1 };
  pi.registerTool({
    name: "EnterPlanMode",
    label: "Enter Plan mode",
    description:
      "Switch this session to Plan mode: explore and write a plan; files cannot be changed until a person approves it. Call it alone.",
    parameters: Type.Object({}),
    async execute(toolCallId) {
      return withCodes(async () => {
        const sessionId = s.requireSession();
        const { index, size } = position(toolCallId);
        await s.call("plans.enter", {
          sessionId,
          turnId: s.turnId ?? "",
          toolCallId,
          batchIndex: index,
          batchSize: size,
        });
        return text("Plan mode is on. Explore, then submit the plan with SubmitPlan (alone in its batch).");
      });
    },
  });
  pi.registerTool({
    name: "SubmitPlan",
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
        const sessionId = s.requireSession();
        const { index, size } = position(toolCallId);
        const approval = await s.call("plans.submit", {
          sessionId,
          turnId: s.turnId ?? "",
          toolCallId,
          batchIndex: index,
          batchSize: size,
          title: params.title,
          markdown: params.markdown,
          question: params.question,
          branchPath: s.branchPath(ctx),
        });
        return text(
          `The plan was written to ${approval.artifactRelativePath} and is waiting for a person's approval ` +
            `(expires ${new Date(approval.expiresAt).toISOString()}). Stop here; do not start the work.`,
        );
      });
    },
  });
  pi.registerTool({
    name: "update_plan_draft",
    label: "Update plan draft",
    description:
      "Save the complete current plan (never a patch) as a checkpoint. Pass the revision you last saw (0 for the first).",
    parameters: Type.Object({
      markdown: Type.String({ description: "The complete plan" }),
      expectedRevision: Type.Integer({ description: "The revision you last saw; 0 for none" }),
    }),
    async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
      return withCodes(async () => {
        const saved = await s.call("checkpoints.save", {
          sessionId: s.requireSession(),
          branchPath: s.branchPath(ctx),
          markdown: params.markdown,
          expectedRevision: params.expectedRevision,
        });
        const c = saved.checkpoint;
        return text(`Saved as revision ${c.revision} (sha256 ${c.sha256}).`);
      });
    },
  });
  pi.registerTool({
    name: "read_plan",
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
async function markSeen(
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

async function exitPlan(s: PlanhostSession, pi: ExtensionAPI, ctx: ExtensionContext): Promise<void> {
  const sessionId = s.requireSession();
  const before = pi.getActiveTools();
  const result = await s.call("plans.exit", { sessionId, availableTools: pi.getAllTools().map((t: any) => t.name) });
  if (result.restoreTools && result.restoreTools.length > 0) pi.setActiveTools(result.restoreTools);
  else pi.setActiveTools(before);
  ctx.ui.setStatus("planhost", undefined);
  ctx.ui.notify("Left Plan mode; the plan and its checkpoints are kept for the next /plan.", "info");
}

async function save(s: PlanhostSession, ctx: ExtensionContext): Promise<boolean> {
  const sessionId = s.requireSession();
  const request = await s.call("publications.request", { sessionId, branchPath: s.branchPath(ctx) });
  if (request.outcome === "synced" || !request.publication) {
    ctx.ui.notify("The published plan is already up to date.", "info");
    return true;
  }
  const p = request.publication;
  const answer = await ctx.ui.select(
    `Publish revision ${p.revision} of the plan to ${p.relativePath}?`,
    ["Publish", "Cancel"],
  );
  const result = await s.call("publications.resolve", {
    publicationId: p.publicationId,
    action: answer === "Publish" ? "approve" : "reject",
  });
  ctx.ui.notify(`planhost: publication ${result.outcome}: ${result.publication.relativePath}`, result.outcome === "completed" ? "info" : "warning");
  return result.outcome === "completed";
}

export function registerPlanCommand(pi: ExtensionAPI, s: PlanhostSession): void {
  const completions = ["save", "preview", "exit", "status", "help", "--help", "-h"];
  pi.registerCommand("plan", {
    description: "Plan mode, enforced by planhost: /plan, /plan save | preview | exit | status | help",
    getArgumentCompletions: (prefix: string) =>
      completions.filter((c) => c.startsWith(prefix)).map((value) => ({ value, label: value })),
    handler: async (args: string, ctx) => {
      s.ctx = ctx;
      try {
        const parsed = await s.call("plans.parseCommand", { line: `/plan ${args}`.trim() });
        const sessionId = s.requireSession();
        switch (parsed.command) {
          case "enter": {
            const session = await s.call("sessions.setMode", { sessionId, mode: "plan" });
            ctx.ui.setStatus("planhost", `plan · ${session.planState.replace("_", " ")}`);
            ctx.ui.notify("Plan mode is on: writes are blocked by planhost until a plan is approved.", "info");
            if (!ctx.sessionManager.getSessionFile()) {
              ctx.ui.notify("This session is not saved (--no-session): the plan lives only as long as the host remembers it.", "warning");
            }
            return;
          }
          case "status": {
            const st = await s.call("plans.status", { sessionId, branchPath: s.branchPath(ctx) });
            ctx.ui.notify(
              `Plan mode ${st.active ? "active" : "inactive"} · revision ${st.revision ?? "none"} · ` +
                `${st.publication}${st.path ? ` (${st.path})` : ""} · ${st.persisted ? "persisted" : "ephemeral"} session`,
              "info",
            );
            return;
          }
          case "preview": {
            const latest = await s.call("checkpoints.latest", { sessionId, branchPath: s.branchPath(ctx) });
            ctx.ui.notify(`Revision ${latest.checkpoint.revision}:\n${latest.markdown}`, "info");
            await markSeen(s, ctx, sessionId, latest.checkpoint);
            return;
          }
          case "save":
            await save(s, ctx);
            return;
          case "exit": {
            for (;;) {
              const options = await s.call("plans.exitOptions", { sessionId, branchPath: s.branchPath(ctx) });
              const offer = options.offer;
              if (offer.kind === "exitNow") return exitPlan(s, pi, ctx);
              const choices = [offer.default, ...offer.choices.filter((c) => c !== offer.default)];
              const picked = await ctx.ui.select("Leave Plan mode?", choices.map((c) => EXIT_LABELS[c]));
              const choice = choices.find((c) => EXIT_LABELS[c] === picked) ?? "continuePlanning";
              if (choice === "exitWithoutPublishing") return exitPlan(s, pi, ctx);
              if (choice === "continuePlanning") return;
              if (choice === "preview") {
                const latest = await s.call("checkpoints.latest", { sessionId, branchPath: s.branchPath(ctx) });
                ctx.ui.notify(latest.markdown, "info");
                await markSeen(s, ctx, sessionId, latest.checkpoint);
                continue;
              }
              if (choice === "createOrUpdatePlan") {
                if (await save(s, ctx)) return exitPlan(s, pi, ctx);
                continue;
              }
              pi.sendUserMessage("Finalize the plan now: save it with update_plan_draft, then stop.");
              return;
            }
          }
          default:
            ctx.ui.notify(parsed.help ?? "usage: /plan [save|preview|exit|status|help]", parsed.errorCode ? "warning" : "info");
        }
      } catch (error) {
        ctx.ui.notify(`planhost: ${describe(error)}`, "error");
      }
    },
  });
}

// planhost for pi: Plan mode enforced by the host. Every tool call is authorized by planhost,
// bash runs through its shell (streamed output, bounded timeouts, the whole tree killed), plans
// are immutable files with an approval that has a deadline, and everything survives a restart
// because planhost keeps it in SQLite. The extension decides nothing: it forwards and shows.
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";

import { registerPlanCommand, registerPlanhostCommand } from "./commands.ts";
import { authorize, registerBash, registerUserBash } from "./gate.ts";
import {
  afterRun,
  applySession,
  claimQueued,
  observeTools,
  registerPlanTools,
  reopenPending,
  settleHandoff,
  syncTools,
  reportInterrupted,
  showApproval,
  watch,
} from "./plan.ts";
import { HostError } from "./host.ts";
import type { ContentBlock, SessionSource, StopReason } from "./protocol.d.ts";
import { describe, PlanhostSession } from "./session.ts";

/** pi's stop reasons in the host's vocabulary; anything but a finished answer is not `stop`. */
function stopReason(reason: unknown): StopReason {
  switch (reason) {
    case "stop":
      return "stop";
    case "length":
      return "length";
    case "toolUse":
      return "tool_use";
    case "error":
      return "error";
    default:
      // aborted, and 1.6's pending and deferred: not a finished answer.
      return "aborted";
  }
}

/** pi's `session_start` reason in the host's vocabulary. */
function sessionSource(reason: unknown): SessionSource {
  switch (reason) {
    case "resume":
      return "resume";
    case "fork":
      return "fork";
    case "reload":
      return "reload";
    default:
      return "startup";
  }
}

/** The name the host knows a pi tool by (`bash` is the host's `Bash`). */
function HOST_NAMES_OF(toolName: string): string {
  return toolName === "bash" ? "Bash" : toolName;
}

function blocks(content: unknown): ContentBlock[] {
  if (!Array.isArray(content)) return [];
  return content.map((block: any): ContentBlock => {
    if (block?.type === "text") return { type: "text", text: String(block.text ?? "") };
    if (block?.type === "toolCall") {
      return {
        type: "tool_call",
        id: String(block.id ?? ""),
        name: String(block.name ?? ""),
        arguments: JSON.stringify(block.arguments ?? {}),
      };
    }
    return { type: "other", kind: String(block?.type ?? "unknown"), payload: JSON.stringify(block) };
  });
}

/** The persisted entry that holds `message` (1.6 names it in `turn_end`; 0.73 is searched). */
function entryOf(ctx: ExtensionContext, message: any, named: unknown): string | undefined {
  if (typeof named === "string") return named;
  const branch = ctx.sessionManager.getBranch();
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry: any = branch[i];
    if (entry?.type === "message" && (entry.message === message || entry.message?.timestamp === message?.timestamp)) {
      return entry.id;
    }
  }
  return undefined;
}

export default function planhost(pi: ExtensionAPI): void {
  const s = new PlanhostSession(pi);
  watch(s, pi);
  registerBash(pi, s);
  registerUserBash(pi, s);
  registerPlanTools(pi, s);
  registerPlanCommand(pi, s);
  registerPlanhostCommand(pi, s);

  pi.on("session_start", async (event: any, ctx) => {
    s.ctx = ctx;
    s.sessionId = undefined;
    s.turnId = undefined;
    s.execution = undefined;
    s.mode = undefined;
    s.toolsSynced = false;
    try {
      const session = await s.open(ctx, true, sessionSource(event?.reason));
      await applySession(s, pi, ctx, session);
      // Coming back (`pi -c`): a still-pending approval keeps its original deadline; one a host
      // restart interrupted is reported once, never revived.
      if (session.pendingApproval) void showApproval(s, ctx, session.pendingApproval);
      else void reportInterrupted(s, pi, ctx).catch(() => {});
      const live = session.liveExecution;
      if (live?.state === "queued") void claimQueued(s, pi, live.executionId);
      // Seed 004: a handoff left pending by a restart is never sent by itself.
      if (session.mode === "plan") {
        const st = await s.call("plans.status", { sessionId: session.id, branchPath: s.branchPath(ctx) });
        if (st.phase === "handoff_pending") {
          ctx.ui.notify(
            "planhost: a plan handoff was pending when pi or the host stopped; it is never sent by itself. " +
              "/plan --review confirms it again, /plan --cancel-handoff keeps planning.",
            "warning",
          );
        }
      }
    } catch (error) {
      s.watchForHost(error);
      ctx.ui.notify(`planhost: ${describe(error)}`, "error");
    }
  });

  // A prompt while a plan waits for its answer would only fail every tool: say so and reopen
  // the approval instead.
  pi.on("input", async (event: any, ctx) => {
    if (event?.source === "extension" || !s.sessionId) return { action: "continue" };
    try {
      if (await reopenPending(s, ctx, "Your message was not sent (it is back in the editor): ")) {
        (ctx.ui as any).setEditorText?.(String(event.text ?? ""));
        return { action: "handled" };
      }
    } catch {
      // The host decides at turns.begin; nothing to add here.
    }
    return { action: "continue" };
  });

  pi.on("session_shutdown", async () => {
    await s.close();
  });

  pi.on("agent_start", async (_event, ctx) => {
    s.ctx = ctx;
    s.batches.clear();
    if (s.execution) {
      s.turnId = s.execution.turnId;
      s.runIsExecution = true;
      return;
    }
    s.runIsExecution = false;
    // A dispatched handoff's run: its turn begins once the prompt has started (an Agent turn).
    if (s.handoff) {
      s.deferredTurn = true;
      return;
    }
    await beginTurn(ctx);
  });

  async function beginTurn(ctx: ExtensionContext, handoffToken?: string): Promise<void> {
    try {
      s.requireSession();
      const result = await s.event(ctx, { kind: "promptSubmitted", handoffToken });
      s.turnId = result.session.activeTurn?.id;
      if (!s.turnId) {
        // A plan waits: the prompt begins nothing (the input handler reopens its dialog).
        throw new HostError("TURN_NOT_ACTIVE", result.directive.reason ?? result.context ?? "no turn began");
      }
      void observeTools(s, pi, ctx);
    } catch (error) {
      s.turnId = undefined;
      ctx.ui.notify(`planhost: this run has no host turn, so every tool call is blocked: ${describe(error)}`, "error");
    }
  }

  // Seed 004: the handed-off run's first tool snapshot is the execution's (pi reads the active
  // tools when the run starts); the host still holds it to Plan until the prompt is accepted.
  pi.on("before_agent_start", async () => {
    if (s.handoff) await syncTools(s, pi, "agent");
    return undefined;
  });

  // Seed 004: the matching message_start records the handoff's acceptance.
  // pi 1.6 does not wait for one event's handlers before the next event: the run's later
  // messages (and its tool calls, in gate.ts) wait for the settling of the first.
  pi.on("message_start", async (event, ctx) => {
    if (s.turnReady) return s.turnReady;
    // 1.6 starts a run with a system message; the handoff is settled by the user's.
    if ((!s.handoff && !s.deferredTurn) || (event as any).message?.role !== "user") return;
    s.turnReady = (async () => {
      const token = await settleHandoff(s, pi, ctx, (event as any).message, (t) => beginTurn(ctx, t));
      if (s.deferredTurn && !token) {
        s.deferredTurn = false;
        await beginTurn(ctx);
      }
      s.deferredTurn = false;
    })();
    try {
      await s.turnReady;
    } finally {
      s.turnReady = undefined;
    }
  });

  pi.on("agent_end", async (event, ctx) => {
    s.ctx = ctx;
    const sessionId = s.sessionId;
    const turnId = s.turnId;
    s.turnId = undefined;
    const messages = (event as any).messages as any[] | undefined;
    const last = [...(messages ?? [])].reverse().find((m) => m?.role === "assistant");
    const aborted = last?.stopReason === "aborted";
    if (!sessionId || !turnId) return;
    try {
      // The host ends the run's turn: an execution's through its execution.
      s.execution = undefined;
      s.runIsExecution = false;
      await s.event(ctx, { kind: "turnStopped", aborted });
    } catch (error) {
      ctx.ui.notify(`planhost: ${describe(error)}`, "warning");
    }
    if (s.queuedExecution) {
      void claimQueued(s, pi, s.queuedExecution);
      return;
    }
    void afterRun(s, pi, ctx).catch(() => {});
  });

  // The batch position of every tool call: the tool_call event has none, the message has it.
  pi.on("message_end", async (event) => {
    const message: any = event.message;
    if (message?.role !== "assistant" || !Array.isArray(message.content)) return;
    const calls = message.content.filter((b: any) => b?.type === "toolCall");
    calls.forEach((call: any, index: number) => s.batches.set(call.id, { index, size: calls.length }));
  });

  pi.on("tool_call", async (event, ctx) => authorize(s, event, ctx));

  // A tool pi ran itself has finished: the host voids its grant and the web page stops showing
  // it as in flight. Not awaited; a call the host ran (bash) or denied is a no-op there.
  pi.on("tool_execution_end", async (event, ctx) => {
    if (!s.sessionId || !s.turnId) return;
    // After pi has gone on (its next event is not held up by this socket write).
    setImmediate(() => {
      void s
        .event(ctx, {
          kind: "toolFinished",
          callId: event.toolCallId,
          tool: HOST_NAMES_OF(event.toolName),
          isError: Boolean(event.isError),
        })
        .catch(() => {});
    });
  });

  // Seed 004: a finished assistant message is offered for <proposed_plan> capture.
  pi.on("turn_end", async (event, ctx) => {
    const message: any = event.message;
    const sessionId = s.sessionId;
    if (message?.role !== "assistant" || !sessionId || !s.turnId) return;
    const entryId = entryOf(ctx, message, (event as any).messageEntryId);
    if (!entryId) return;
    try {
      const branchPath = s.branchPath(ctx);
      const mark = s.projectionMark();
      const answered = await s.event(ctx, {
        kind: "messageFinished",
        message: { entryId, content: blocks(message.content), stopReason: stopReason(message.stopReason) },
      });
      const result = answered.capture;
      if (!result) return;
      // The next model call's projection, read by the host right after the capture.
      s.rememberProjection(branchPath, result.projection, mark, result.eventSeq);
      if (answered.notice) ctx.ui.notify(answered.notice.text, answered.notice.level);
      if (result.checkpoint && result.created && result.checkpoint.source === "capture") s.offerReview = true;
    } catch (error) {
      ctx.ui.notify(`planhost: capture failed: ${describe(error)}`, "warning");
    }
  });

  // Every model call sees the exact latest checkpoint, labelled as unapproved data.
  pi.on("context", async (event, ctx) => {
    const sessionId = s.sessionId;
    if (!sessionId) return undefined;
    try {
      const branchPath = s.branchPath(ctx);
      const projection =
        s.takeProjection(branchPath) ?? (await s.call("checkpoints.projection", { sessionId, branchPath }));
      if (!projection.text) return undefined;
      const extra: any = { role: "user", content: [{ type: "text", text: projection.text }], timestamp: Date.now() };
      return { messages: [...event.messages, extra] };
    } catch {
      return undefined;
    }
  });

  // `/tree`: the branch changed; approvals bound to the old one are cleared by the host.
  pi.on("session_tree", async (_event, ctx) => {
    s.forgetProjection();
    const sessionId = s.sessionId;
    if (!sessionId) return;
    try {
      const cleared = await s.call("plans.switchBranch", { sessionId });
      if (cleared.revokedPublications.length > 0 || cleared.handoffCleared) {
        ctx.ui.notify("planhost: the branch changed; its pending approvals were cleared.", "info");
      }
    } catch (error) {
      ctx.ui.notify(`planhost: ${describe(error)}`, "warning");
    }
  });
}

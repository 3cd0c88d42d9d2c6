// The commands a pi user types: `/plan` (seed 003's grammar and seed 004's flags, parsed by the
// host) and `/planhost` (the host's settings a pi user may change without leaving pi). Every
// rule is the host's; this asks and shows.
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";

import {
  EXIT_LABELS,
  PLAN_RULES,
  applySession,
  cancelHandoff,
  markSeen,
  nameSession,
  present,
  reopenPending,
  reviewHandoff,
  syncTools,
} from "./plan.ts";
import { describe, type PlanhostSession } from "./session.ts";

async function exitPlan(s: PlanhostSession, pi: ExtensionAPI, ctx: ExtensionContext): Promise<void> {
  const sessionId = s.requireSession();
  const result = await s.call("plans.exit", { sessionId, availableTools: pi.getAllTools().map((t: any) => t.name) });
  if (result.restoreTools && result.restoreTools.length > 0) pi.setActiveTools(result.restoreTools);
  s.mode = "agent";
  ctx.ui.setStatus("planhost", undefined);
  present(s, ctx, false);
  ctx.ui.notify("Left Plan mode; the plan and its checkpoints are kept for the next /plan.", "info");
}

async function save(s: PlanhostSession, ctx: ExtensionContext): Promise<boolean> {
  const sessionId = s.requireSession();
  if (s.mode !== "plan") {
    const latest = (await s.call("plans.list", { sessionId, limit: 1 })).items[0];
    const approved = latest?.status === "approved" ? `The approved plan is ${latest.artifactRelativePath}. ` : "";
    ctx.ui.notify(
      `Plan mode is not on, so there is no plan to publish from here. ${approved}` +
        "To publish the plan to .pi/plans/, type /plan (the plan and its checkpoints come back), then /plan save.",
      "info",
    );
    return false;
  }
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
  if (result.outcome === "completed") await nameSession(s, s.pi, ctx);
  return result.outcome === "completed";
}

/** `/plan` while planning: a no-op (seed 003), unless the active tools changed outside planhost;
 * then the person chooses: Plan's tools again, or the changed set as the new applied set. */
async function replan(s: PlanhostSession, pi: ExtensionAPI, ctx: ExtensionContext, sessionId: string): Promise<void> {
  const st = await s.call("plans.status", { sessionId, branchPath: s.branchPath(ctx) });
  if (!st.toolConflict) {
    ctx.ui.notify("Plan mode is already on.", "info");
    return;
  }
  const pick = ctx.hasUI
    ? await ctx.ui.select("The active tools changed outside planhost while planning. Approval waits until you choose:", [
        "Re-apply Plan mode's tools",
        "Keep the changed tools",
      ])
    : undefined;
  if (pick === "Keep the changed tools") {
    await s.call("toolset.accept", { sessionId, tools: pi.getActiveTools() });
  } else if (pick === "Re-apply Plan mode's tools") {
    await syncTools(s, pi, "plan");
  } else {
    return;
  }
  s.conflictReported = false;
  ctx.ui.notify("The tool set is settled; approvals can go ahead.", "info");
}

async function showStatus(s: PlanhostSession, ctx: ExtensionContext, sessionId: string): Promise<void> {
  const st = await s.call("plans.status", { sessionId, branchPath: s.branchPath(ctx) });
  ctx.ui.notify(
    `Plan mode ${st.active ? "active" : "inactive"} · revision ${st.revision ?? "none"} · ` +
      `${st.publication}${st.path ? ` (${st.path})` : ""} · ${st.persisted ? "persisted" : "ephemeral"} session`,
    "info",
  );
}

export function registerPlanCommand(pi: ExtensionAPI, s: PlanhostSession): void {
  pi.registerCommand("plan", {
    description: "Plan mode, enforced by planhost: /plan, /plan save | preview | exit | status | help | --review",
    // The host's grammar lists them (seed 003's order, then seed 004's flags).
    getArgumentCompletions: (prefix: string) =>
      s.completions.filter((c) => c.startsWith(prefix)).map((value) => ({ value, label: value })),
    handler: async (args: string, ctx) => {
      s.ctx = ctx;
      try {
        const parsed = await s.call("plans.parseCommand", { line: `/plan ${args}`.trim() });
        s.completions = parsed.completions;
        const sessionId = s.requireSession();
        // A plan waiting for an answer comes first: every /plan that acts reopens its dialog.
        if (parsed.command && parsed.command !== "help" && parsed.command !== "preview") {
          if (parsed.command === "status") await showStatus(s, ctx, sessionId);
          const why = parsed.command === "status" || parsed.command === "enter" ? "" : `/plan ${parsed.command} waits: `;
          if (await reopenPending(s, ctx, why)) return;
          if (parsed.command === "status") return;
        }
        switch (parsed.command) {
          case "enter": {
            if (s.mode === "plan") return replan(s, pi, ctx, sessionId);
            const session = await s.call("sessions.setMode", { sessionId, mode: "plan" });
            await applySession(s, pi, ctx, session);
            const preset = session.policyPreset ?? (await s.call("settings.get", {})).defaultPolicyPreset ?? "host";
            ctx.ui.notify(`Plan mode is on (${preset} preset). ${PLAN_RULES[preset]} Type your task.`, "info");
            if (!ctx.sessionManager.getSessionFile()) {
              ctx.ui.notify("This session is not saved (--no-session): the plan lives only as long as the host remembers it.", "warning");
            }
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
          case "review":
          case "retry":
            await reviewHandoff(s, pi, ctx);
            return;
          case "cancelHandoff": {
            const st = await s.call("plans.status", { sessionId, branchPath: s.branchPath(ctx) });
            if (st.phase !== "handoff_pending") {
              ctx.ui.notify("No handoff is pending; nothing to cancel.", "info");
              return;
            }
            await cancelHandoff(s, ctx);
            return;
          }
          case "executeFresh":
            ctx.ui.notify(
              "/plan --execute-fresh is unavailable: pi offers extensions no way to make a new session durable " +
                "before its first answer, so a fresh execution could be lost (seed 004). Use /plan --review to execute in this session.",
              "info",
            );
            return;
          default:
            ctx.ui.notify(parsed.help ?? "usage: /plan [save|preview|exit|status|help]", parsed.errorCode ? "warning" : "info");
        }
      } catch (error) {
        ctx.ui.notify(`planhost: ${describe(error)}`, "error");
      }
    },
  });
}

const PRESETS = ["host", "literal", "strict", "explore"] as const;

const PLANHOST_HELP = `Usage:
  /planhost preset                 Show the tool-policy preset of this session
  /planhost preset NAME            Use preset NAME for this session (host, literal, strict, explore)
  /planhost preset NAME --default  Make NAME the host's default for every session that has none

Presets: host (the default: in Plan, shell commands run unasked only when proven read-only),
literal (seed 000 as written: shell commands by the permission mode), strict (Plan is read-only:
no shell), explore (only file writers are blocked in Plan).`;

/** `/planhost`: the host's settings a pi user may change without leaving pi. */
export function registerPlanhostCommand(pi: ExtensionAPI, s: PlanhostSession): void {
  pi.registerCommand("planhost", {
    description: "planhost settings: /planhost preset [host|literal|strict|explore] [--default]",
    getArgumentCompletions: (prefix: string) =>
      [...PRESETS.map((p) => `preset ${p}`), "preset", "help"]
        .filter((c) => c.startsWith(prefix))
        .map((value) => ({ value, label: value })),
    handler: async (args: string, ctx) => {
      s.ctx = ctx;
      const words = args.trim().split(/\s+/).filter(Boolean);
      try {
        const sessionId = s.requireSession();
        if (words[0] !== "preset" || words.length > 3) {
          ctx.ui.notify(PLANHOST_HELP, words.length === 0 || words[0] === "help" ? "info" : "warning");
          return;
        }
        const name = words[1];
        if (!name) {
          const session = await s.call("sessions.get", { sessionId });
          const fallback = (await s.call("settings.get", {})).defaultPolicyPreset;
          ctx.ui.notify(
            session.policyPreset
              ? `This session uses the ${session.policyPreset} preset.`
              : `This session uses the host's default preset: ${fallback ?? "host"}.`,
            "info",
          );
          return;
        }
        const preset = PRESETS.find((p) => p === name);
        const asDefault = words[2] === "--default";
        if (!preset || (words[2] !== undefined && !asDefault)) {
          ctx.ui.notify(`/planhost preset does not accept "${words.slice(1).join(" ")}".\n\n${PLANHOST_HELP}`, "warning");
          return;
        }
        if (asDefault) {
          await s.call("settings.set", { defaultPolicyPreset: preset });
          ctx.ui.notify(`The host's default preset is now ${preset}; it applies from the next turn of every session without its own.`, "info");
        } else {
          const session = await s.call("sessions.configure", { sessionId, policyPreset: preset });
          ctx.ui.notify(`This session now uses the ${preset} preset, from its next turn.`, "info");
          // Plan's tool set depends on the preset.
          if (session.mode === "plan") await syncTools(s, pi, "plan");
        }
      } catch (error) {
        ctx.ui.notify(`planhost: ${describe(error)}`, "error");
      }
    },
  });
}

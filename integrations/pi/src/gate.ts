// The gate: every pi tool call is authorized by planhost before it runs, with its true place in
// the assistant batch; `bash` (and the user's `!cmd`) runs through the host's shell. A deny, an
// unanswered ask, an error or an unreachable host all block: fail closed, never open.
import type {
  BashOperations,
  ExtensionAPI,
  ExtensionContext,
  ToolCallEvent,
} from "@mariozechner/pi-coding-agent";
import { createBashToolDefinition } from "@mariozechner/pi-coding-agent";

import { outputOf } from "./contract.ts";
import { HostError } from "./host.ts";
import type { HostTool } from "./protocol.d.ts";
import { coded, describe, type PlanhostSession } from "./session.ts";

/** A host tool's canonical name, checked against the generated `HostTool` union by `tsc`. */
export function hostTool<T extends HostTool>(name: T): T {
  return name;
}

/** pi's tool names that the host knows by another name. */
const HOST_NAMES: Record<string, HostTool> = { bash: hostTool("Bash") };

/** Tools this extension registers for the host: they are the host's, not a plugin's. */
export const HOST_TOOLS = new Set<string>([
  hostTool("EnterPlanMode"),
  hostTool("SubmitPlan"),
  hostTool("update_plan_draft"),
  hostTool("read_plan"),
  "bash",
]);

/** The host's Bash input for pi's bash arguments; the grant binds exactly this. */
export function bashInput(args: { command?: unknown; timeout?: unknown }): Record<string, unknown> {
  const input: Record<string, unknown> = { command: args.command };
  if (typeof args.timeout === "number") input.timeoutMs = Math.round(args.timeout * 1000);
  return input;
}

export function provenance(pi: ExtensionAPI, toolName: string): { kind: "builtIn" | "extension"; package?: string; sourcePath?: string } {
  if (HOST_TOOLS.has(toolName)) return { kind: "builtIn" };
  const tool = pi.getAllTools().find((t: any) => t.name === toolName) as any;
  const source = tool?.sourceInfo;
  if (!source || source.source === "builtin" || source.type === "builtin") return { kind: "builtIn" };
  return {
    kind: "extension",
    package: String(source.packageName ?? source.package ?? source.name ?? "unknown"),
    sourcePath: String(source.path ?? source.filePath ?? source.sourcePath ?? "unknown"),
  };
}

/** What an ask shows of a call: a shell command as the command itself, anything else as JSON. */
function shownInput(toolName: string, input: unknown): string {
  const command = (input as any)?.command;
  if (toolName === hostTool("Bash") && typeof command === "string") return `$ ${command}`;
  return `${toolName} ${JSON.stringify(input, null, 2)}`;
}

/** Shows an ask with its exact input and sends the person's answer back through the host. The
 * host says which answer comes first: Deny for a command Plan mode could not prove read-only. */
async function ask(
  s: PlanhostSession,
  ctx: ExtensionContext,
  requestId: string,
  toolName: string,
  reason: string,
  input: unknown,
  defaultAnswer: string | null | undefined,
): Promise<boolean> {
  if (!ctx.hasUI) {
    await s.call("permissions.resolve", { requestId, decision: "deny", note: "no UI to ask" }).catch(() => {});
    return false;
  }
  const controller = new AbortController();
  // Answered on another surface (the CLI, the web page): close this dialog.
  const onEvent = (event: any) => {
    if (event.kind === "permissionResolved" && event.requestId === requestId) controller.abort();
  };
  s.onEvent.push(onEvent);
  // The host went away: its asks are gone with it (a restarted host has none), so the dialog
  // closes and the call is blocked.
  let lost = false;
  const onLost = () => {
    lost = true;
    controller.abort();
  };
  s.onLost.push(onLost);
  try {
    const options = defaultAnswer === "deny" ? ["Deny", "Allow"] : ["Allow", "Deny"];
    const choice = await ctx.ui.select(`planhost asks: ${reason}\n${shownInput(toolName, input)}`, options, {
      signal: controller.signal,
    });
    if (lost) throw new HostError("HOST_UNREACHABLE", "the host stopped while it was asking; the command did not run");
    if (controller.signal.aborted) {
      const asks = await s.call("permissions.list", { sessionId: s.sessionId, status: ["answered"] });
      return asks.items.some((a) => a.requestId === requestId && a.decision === "allow");
    }
    const decision = choice === "Allow" ? "allow" : "deny";
    const answered = await s.call("permissions.resolve", { requestId, decision });
    return answered.decision === "allow";
  } finally {
    s.onEvent.splice(s.onEvent.indexOf(onEvent), 1);
    s.onLost.splice(s.onLost.indexOf(onLost), 1);
  }
}

/** The `tool_call` handler: allow (undefined), or block with the host's reason and code. The
 * host decides (`agent.event`, a proposed tool call); an ask is shown here, Deny first where
 * the host says so. `turnId` is the turn the call belongs to (the run's, or a `!cmd`'s own). */
export async function authorize(
  s: PlanhostSession,
  event: ToolCallEvent,
  ctx: ExtensionContext,
): Promise<{ block: true; reason: string } | undefined> {
  try {
    if (s.turnReady) await s.turnReady;
    s.requireSession();
    if (!s.turnId) throw new HostError("TURN_NOT_ACTIVE", "planhost has no turn for this run (it could not start one; see the message above)");
    const position = s.batches.get(event.toolCallId) ?? { index: 0, size: 1 };
    const hostName = HOST_NAMES[event.toolName] ?? event.toolName;
    const input = event.toolName === "bash" ? bashInput(event.input as any) : (event.input as Record<string, unknown>);
    const result = await s.event(ctx, {
      kind: "toolProposed",
      callId: event.toolCallId,
      tool: hostName,
      input,
      batchIndex: position.index,
      batchSize: position.size,
      provenance: provenance(s.pi, event.toolName),
    });
    const directive = result.directive;
    if (directive.kind === "allow" || directive.kind === "proceed") {
      s.authorized.set(event.toolCallId, input);
      return undefined;
    }
    if (directive.kind === "ask" && directive.requestId) {
      const yes = await ask(s, ctx, directive.requestId, hostName, directive.reason ?? "", input, directive.defaultAnswer);
      if (yes) {
        s.authorized.set(event.toolCallId, input);
        return undefined;
      }
      return { block: true, reason: `planhost: the person said no to ${hostName} [PERMISSION_DENIED]` };
    }
    return { block: true, reason: directive.reason ?? `planhost denied ${hostName} [${directive.code ?? directive.rule}]` };
  } catch (error) {
    return { block: true, reason: `planhost: ${describe(error)}` };
  }
}

/** Runs one command through the host's Bash: output streamed, the host's timeout and tree kill. */
export function hostBash(s: PlanhostSession, toolCallId: string, turnId: () => string | undefined): BashOperations {
  return {
    exec: async (_command, _cwd, { onData, signal }) => {
      const sessionId = s.requireSession();
      const turn = turnId();
      const input = s.authorized.get(toolCallId);
      if (!turn || !input) throw new Error(`planhost: ${toolCallId} was not authorized [TOOL_NOT_AUTHORIZED]`);
      s.onOutput.set(toolCallId, (_stream, text) => onData(Buffer.from(text, "utf8")));
      const cancel = () => void s.call("tools.cancel", { sessionId, toolCallId }).catch(() => {});
      signal?.addEventListener("abort", cancel, { once: true });
      try {
        // The host bounds the command (at most 300 s, then the tree kill); wait a little longer.
        const result = await s.call(
          "tools.execute",
          { sessionId, turnId: turn, toolCallId, tool: "Bash", input },
          330_000,
        );
        const output = outputOf("Bash", result);
        if (output.cancelled || signal?.aborted) throw new Error("aborted");
        if (output.timedOut) throw new Error(`timeout:${Math.round(output.timeoutMs / 1000)}`);
        const exit = output.exit;
        return { exitCode: typeof exit === "object" && "code" in exit ? exit.code : 1 };
      } catch (error) {
        throw coded(error);
      } finally {
        signal?.removeEventListener("abort", cancel);
        s.onOutput.delete(toolCallId);
        s.authorized.delete(toolCallId);
      }
    },
  };
}

/** pi's `bash`, with pi's prompt, rendering and truncation, run by the host. */
export function registerBash(pi: ExtensionAPI, s: PlanhostSession): void {
  const base = createBashToolDefinition(process.cwd());
  pi.registerTool({
    ...base,
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      const tool = createBashToolDefinition(ctx.cwd, {
        operations: hostBash(s, toolCallId, () => s.turnId),
      });
      return tool.execute(toolCallId, params, signal, onUpdate, ctx);
    },
  });
}

/** The user's `!cmd`: authorized and run by the host like the model's bash. Outside a run the
 * host gives it a turn of its own, ended once the command has finished (never before it ran). */
export function registerUserBash(pi: ExtensionAPI, s: PlanhostSession): void {
  let counter = 0;
  pi.on("user_bash", async (event: any, ctx) => {
    const toolCallId = `user-bash-${Date.now()}-${++counter}`;
    // A turn this command began, ended when it has run.
    let ownTurn = false;
    const endOwnTurn = () => {
      if (!ownTurn) return;
      ownTurn = false;
      void s.event(ctx, { kind: "turnStopped", aborted: false }).catch(() => {});
    };
    try {
      s.requireSession();
      const runTurn = s.turnId;
      const input = bashInput({ command: event.command });
      const result = await s.event(ctx, {
        kind: "toolProposed",
        callId: toolCallId,
        tool: "Bash",
        input,
        provenance: { kind: "builtIn" },
      });
      const turn = result.session.activeTurn?.id;
      ownTurn = !runTurn && turn !== undefined;
      const directive = result.directive;
      let allowed = directive.kind === "allow";
      if (directive.kind === "ask" && directive.requestId) {
        allowed = await ask(s, ctx, directive.requestId, "Bash", directive.reason ?? "", input, directive.defaultAnswer);
      }
      if (!allowed || !turn) {
        endOwnTurn();
        const reason =
          directive.kind === "ask"
            ? "planhost: you said no to this command [PERMISSION_DENIED]"
            : (directive.reason ?? `planhost denied it [${directive.code ?? directive.rule}]`);
        return { result: { output: reason, exitCode: 1, cancelled: false, truncated: false } };
      }
      s.authorized.set(toolCallId, input);
      const ops = hostBash(s, toolCallId, () => turn);
      const operations: BashOperations = {
        exec: async (command, cwd, options) => {
          try {
            return await ops.exec(command, cwd, options);
          } finally {
            endOwnTurn();
          }
        },
      };
      return { operations };
    } catch (error) {
      endOwnTurn();
      return { result: { output: `planhost: ${describe(error)}`, exitCode: 1, cancelled: false, truncated: false } };
    }
  });
}

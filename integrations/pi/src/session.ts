// The extension's state for one pi session: the host connection, the host session and turn,
// and the small maps pi's events need (batch positions, authorized inputs). Decisions are the
// host's; this only remembers what pi's API does not hand back.
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";

import { Host, HostError, locations, unreachableHelp } from "./host.ts";
import type {
  AgentEvent,
  AgentEventResult,
  Event,
  MethodName,
  Methods,
  ProjectionResult,
  SessionInfo,
  SessionSource,
} from "./protocol.d.ts";

export const VERSION = "0.1.0";

/** A claimed execution waiting for its pi run to start. */
export type ClaimedRun = { executionId: string; turnId: string };

export class PlanhostSession {
  host: Host | undefined;
  private connecting: Promise<Host> | undefined;
  /** The host's session id. */
  sessionId: string | undefined;
  /** The host turn of the pi run in progress. */
  turnId: string | undefined;
  /** The execution the next (or current) run carries out. */
  execution: ClaimedRun | undefined;
  /** An execution approved while a run was on, to claim when it ends. */
  queuedExecution: string | undefined;
  /** Whether the current run is the execution's. */
  runIsExecution = false;
  /** toolCallId → position in its assistant batch. */
  readonly batches = new Map<string, { index: number; size: number }>();
  /** toolCallId → the exact input the host authorized (the grant binds its digest). */
  readonly authorized = new Map<string, Record<string, unknown>>();
  /** The most recent context, for UI from host notifications. */
  ctx: ExtensionContext | undefined;
  /** Why the host is unreachable, when it is. */
  lastError: HostError | undefined;
  /** The session's durable mode as the host last said it. */
  mode: string | undefined;
  /** Whether the tools of `mode` were applied in pi. */
  toolsSynced = false;
  /** Whether a tool-set conflict was reported (once per Plan phase). */
  conflictReported = false;
  /** `/plan`'s argument completions, as the host's grammar lists them. */
  completions: string[] = [];
  /** The theme before Plan mode's, to restore on exit. */
  preTheme: string | undefined;
  /** A handoff this process dispatched, until its run's first user message settles it. */
  handoff: { token: string; text: string } | undefined;
  /** A captured plan was just made ready: offer its review once the run is over. */
  offerReview = false;
  /** The run's host turn waits for the handoff to settle (it begins as an Agent turn). */
  deferredTurn = false;
  /** While a handed-off run's first message settles the handoff and begins the host turn. */
  turnReady: Promise<void> | undefined;
  /** Approvals whose end was reported (once each). */
  readonly endedApprovals = new Set<string>();
  /** The timer that looks for a host again after it could not be reached. */
  private retry: NodeJS.Timeout | undefined;
  /** Calls in flight, awaited before the socket closes. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Handlers of `state.changed` for this session. */
  readonly onEvent: Array<(event: Event) => void> = [];
  /** Handlers run after the connection came back (the host restarted or was restarted). */
  readonly onReconnect: Array<() => void> = [];
  /** Whether pi is shutting the session down (a lost connection is then expected). */
  private shuttingDown = false;
  /** The host said it was asked to stop (`planhost stop`): do not start another one. */
  private hostStopped = false;
  /** After a stop: calls wait for a host a person starts; none is started from here. */
  private dontStart = false;
  /** Handlers run when the connection drops (open dialogs that only the lost host could answer). */
  readonly onLost: Array<() => void> = [];
  /** Handlers of `tools.output`. */
  readonly onOutput = new Map<string, (stream: string, text: string) => void>();
  /** The projection `checkpoints.capture` returned, for the model call right after it; void
   * once used, on any change of this session, and on a branch that does not extend its own. */
  private projection: { branch: string[]; result: ProjectionResult } | undefined;
  /** Model calls so far: a projection read before one of them is not for the next one. */
  private contexts = 0;
  /** The highest `state.changed` seq of this session dispatched so far. */
  private seenSeq = 0;

  /** Where the model calls stand, before asking the host for a projection. */
  projectionMark(): number {
    return this.contexts;
  }

  /** Keeps what the host says the branch's projection is now (current at event `seq`), unless
   * a model call started since `mark` (it would be for a call already made) or a newer change
   * of the session has arrived meanwhile (its event can come before the reply). */
  rememberProjection(
    branch: string[],
    result: ProjectionResult | null | undefined,
    mark: number,
    seq: number,
  ): void {
    const current = result && mark === this.contexts && this.seenSeq <= seq;
    this.projection = current ? { branch, result } : undefined;
  }

  /** The remembered projection if `branch` extends the one it was read for (the entries since
   * hold no checkpoint: one would have come with a `state.changed`); once. */
  takeProjection(branch: string[]): ProjectionResult | undefined {
    this.contexts += 1;
    const kept = this.projection;
    this.projection = undefined;
    if (!kept || kept.branch.length > branch.length) return undefined;
    return kept.branch.every((id, i) => branch[i] === id) ? kept.result : undefined;
  }

  /** Forgets the remembered projection. */
  forgetProjection(): void {
    this.projection = undefined;
  }

  constructor(readonly pi: ExtensionAPI) {}

  /** The socket this extension uses (for messages). */
  get socketPath(): string {
    return this.host?.path ?? locations().socket;
  }

  /** The connection, opened (and the host started) on first use. */
  async connection(start = !this.dontStart): Promise<Host> {
    if (this.host && !this.host.isClosed) return this.host;
    if (!this.connecting) {
      this.connecting = Host.open(
        (method, params) => this.dispatch(method, params),
        VERSION,
        () => this.lost(),
        start,
      )
        .then((host) => {
          this.host = host;
          this.lastError = undefined;
          return host;
        })
        .finally(() => {
          this.connecting = undefined;
        });
    }
    return this.connecting;
  }

  /** One event of this pi session, through the host's agent core (`agent.event`): the host
   * runs the Plan-mode lifecycle and answers one directive, with what the model and the person
   * are told. The session is opened (or reopened) by pi's session id on every event. */
  async event(ctx: ExtensionContext, event: AgentEvent, start = true): Promise<AgentEventResult> {
    const host = await this.connection(start);
    const promise = host.call("agent.event", {
      // pi's tool names (`read`, `bash`, …) are classified with pi's catalog.
      agent: "pi",
      externalSessionId: ctx.sessionManager.getSessionId(),
      workspaceRoot: ctx.cwd,
      // Whether a person can answer a dialog now (not how the session began).
      attended: ctx.hasUI,
      persistence: ctx.sessionManager.getSessionFile() ? "persisted" : "ephemeral",
      branchPath: this.branchPath(ctx),
      event,
    });
    this.inFlight.add(promise);
    try {
      const result = await promise;
      this.sessionId = result.session.id;
      return result;
    } finally {
      this.inFlight.delete(promise);
    }
  }

  /** Opens (or reopens, after `pi -c`) the host session of this pi session. */
  async open(ctx: ExtensionContext, start = true, source: SessionSource = "startup"): Promise<SessionInfo> {
    this.ctx = ctx;
    const host = await this.connection(start);
    const session = (await this.event(ctx, { kind: "sessionStarted", source }, start)).session;
    if (this.completions.length === 0) {
      void host
        .call("plans.parseCommand", { line: "/plan help" })
        .then((parsed) => {
          this.completions = parsed.completions;
        })
        .catch(() => {});
    }
    return session;
  }

  /** A call that needs the session; tracked so shutdown can wait for it. */
  async call<M extends MethodName>(
    method: M,
    params: Methods[M]["params"],
    timeoutMs?: number,
  ): Promise<Methods[M]["result"]> {
    const host = await this.connection();
    const promise = host.call(method, params, timeoutMs);
    this.inFlight.add(promise);
    try {
      return await promise;
    } finally {
      this.inFlight.delete(promise);
    }
  }

  /** The session id, or a fail-closed error when the host session could not be opened. */
  requireSession(): string {
    if (!this.sessionId) {
      throw this.lastError ?? new HostError("HOST_UNREACHABLE", unreachableHelp(this.socketPath));
    }
    return this.sessionId;
  }

  /** The host could not be reached: look for one every second (without starting one, and
   * without keeping pi alive) and pick the session up again when it answers. */
  watchForHost(error: unknown): void {
    this.lastError = error instanceof HostError ? error : new HostError("HOST_UNREACHABLE", describe(error));
    if (this.retry || this.shuttingDown) return;
    this.retry = setInterval(() => {
      const ctx = this.ctx;
      if (!ctx || this.shuttingDown || this.connecting) return;
      this.open(ctx, false)
        .then(() => {
          this.stopWatching();
          this.lastError = undefined;
          this.dontStart = false;
          ctx.ui.notify("planhost: the host answers again; tools run through it from now on.", "info");
          for (const handler of this.onReconnect) handler();
        })
        .catch(() => {});
    }, 1000);
    this.retry.unref();
  }

  private stopWatching(): void {
    if (this.retry) clearInterval(this.retry);
    this.retry = undefined;
  }

  /** The client's branch: entry ids from the root to the leaf. */
  branchPath(ctx: ExtensionContext): string[] {
    const path = ctx.sessionManager.getBranch().map((entry) => entry.id);
    return path.length > 0 ? path : [ctx.sessionManager.getSessionId()];
  }

  /** The host went away: reconnect (starting it again if needed) and resync from its state —
   * a restarted host has interrupted what was pending, and says so; nothing is replayed. */
  private lost(): void {
    this.host = undefined;
    this.projection = undefined;
    for (const handler of [...this.onLost]) handler();
    if (this.shuttingDown) return;
    this.turnId = undefined;
    if (this.hostStopped) {
      // A person stopped it: wait for one to be started again, start none.
      this.hostStopped = false;
      this.dontStart = true;
      this.sessionId = undefined;
      const error = new HostError(
        "HOST_UNREACHABLE",
        "the host was stopped (planhost stop), so every tool call is blocked. Start it again with " +
          "`planhost serve`; this session reconnects by itself.",
      );
      this.watchForHost(error);
      this.ctx?.ui.notify(`planhost: ${describe(error)}`, "warning");
      this.ctx?.ui.setStatus("planhost", "planhost stopped");
      return;
    }
    setTimeout(() => {
      const ctx = this.ctx;
      if (!ctx || this.shuttingDown) return;
      this.open(ctx)
        .then(() => {
          for (const handler of this.onReconnect) handler();
        })
        .catch((error) => {
          this.sessionId = undefined;
          this.watchForHost(error);
          ctx.ui.notify(`planhost: ${describe(error)}`, "error");
        });
    }, 300);
  }

  /** Waits for outstanding calls, then closes the socket. */
  async close(): Promise<void> {
    this.shuttingDown = true;
    this.stopWatching();
    await Promise.allSettled([...this.inFlight]);
    this.host?.close();
    this.host = undefined;
  }

  private dispatch(method: string, params: any): void {
    if (method === "state.changed") {
      if (params?.sessionId !== this.sessionId) return;
      this.projection = undefined;
      if (typeof params.seq === "number" && params.seq > this.seenSeq) this.seenSeq = params.seq;
      for (const handler of this.onEvent) handler(params as Event);
    } else if (method === "host.stopping") {
      this.hostStopped = true;
    } else if (method === "tools.output") {
      this.onOutput.get(params?.toolCallId)?.(params.stream, params.text);
    }
  }
}

/**
 * Runs a tool's body so that a host error reaches the model with its stable code: pi puts only
 * a thrown error's message into the tool result, and HostError keeps the code apart.
 */
export async function withCodes<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw coded(error);
  }
}

/** The error to throw from a tool: a HostError becomes one whose message carries the code. */
export function coded(error: unknown): unknown {
  return error instanceof HostError ? new Error(`planhost: ${describe(error)}`) : error;
}

/** A message for the model and the person: the host's words and its stable code. */
export function describe(error: unknown): string {
  if (error instanceof HostError) return `${error.message} [${error.code}]`;
  return error instanceof Error ? error.message : String(error);
}

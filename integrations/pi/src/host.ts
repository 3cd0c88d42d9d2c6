// The connection to planhost: JSON-RPC 2.0, one object per line, over the host's unix socket.
// When no host answers, the host is started (`PLANHOST_BIN`, else `planhost` on PATH). Every
// failure here is reported to the caller, which fails closed.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";

import type { MethodName, Methods, Notifications } from "./protocol.d.ts";

type Params<M extends MethodName> = Methods[M]["params"];
type Result<M extends MethodName> = Methods[M]["result"];

/** A refusal or failure, with planhost's stable code. */
export class HostError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** How long one request may take before it is treated as a failure (fail closed). */
const REQUEST_TIMEOUT_MS = 30_000;
/** How long a host we started has to come up. */
const START_TIMEOUT_MS = 10_000;

/** Where planhost keeps its state and socket, as `planhost` itself resolves them. */
export function locations(env: NodeJS.ProcessEnv = process.env): {
  socket: string;
  stateDir: string | undefined;
} {
  const stateDir = env.PLANHOST_STATE_DIR || undefined;
  const defaultState = env.XDG_STATE_HOME
    ? join(env.XDG_STATE_HOME, "planhost")
    : join(homedir(), ".local/state/planhost");
  const socket =
    env.PLANHOST_SOCKET ||
    (!stateDir && env.XDG_RUNTIME_DIR
      ? join(env.XDG_RUNTIME_DIR, "planhost.sock")
      : join(stateDir ?? defaultState, "planhost.sock"));
  return { socket, stateDir };
}

/** What the user is told when planhost cannot be reached. */
export function unreachableHelp(socket: string): string {
  return (
    `planhost is not reachable on ${socket}: no tool runs without it (fail closed). ` +
    "Start it with `planhost serve` (or set PLANHOST_BIN to the planhost binary)."
  );
}

type Pending = {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
};

type Listener = <N extends keyof Notifications>(method: N, params: Notifications[N]) => void;

/** One initialized connection to the host. */
export class Host {
  private buffer = "";
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closed = false;
  /** The connection id the host gave (for logs). */
  connectionId = 0;

  private constructor(
    private readonly socket: Socket,
    private readonly listener: Listener,
    readonly path: string,
    private readonly onLost: () => void,
  ) {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => this.onData(chunk));
    socket.on("close", () => this.fail(new HostError("HOST_UNREACHABLE", unreachableHelp(path))));
    socket.on("error", () => this.fail(new HostError("HOST_UNREACHABLE", unreachableHelp(path))));
  }

  /** Connects (starting the host if none answers) and sends `initialize`. `onLost` runs once if
   * the connection later drops (a host that stopped or was killed). */
  static async open(listener: Listener, clientVersion: string, onLost: () => void = () => {}): Promise<Host> {
    const { socket: path, stateDir } = locations();
    let socket = await tryConnect(path);
    if (!socket) {
      startHost(path, stateDir);
      const deadline = Date.now() + START_TIMEOUT_MS;
      while (!socket && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        socket = await tryConnect(path);
      }
    }
    if (!socket) throw new HostError("HOST_UNREACHABLE", unreachableHelp(path));
    const host = new Host(socket, listener, path, onLost);
    const hello = await host.call("initialize", {
      protocolVersion: 2,
      clientName: "pi-planhost",
      clientVersion,
      // pi is both the agent and the person's UI: its dialogs answer approvals.
      roles: ["agent", "approver"],
    });
    host.connectionId = hello.connectionId;
    return host;
  }

  /** Whether the connection is gone. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** One call; any error (including a lost connection or a timeout) rejects with a HostError. */
  call<M extends MethodName>(method: M, params: Params<M>, timeoutMs = REQUEST_TIMEOUT_MS): Promise<Result<M>> {
    if (this.closed) return Promise.reject(new HostError("HOST_UNREACHABLE", unreachableHelp(this.path)));
    const id = this.nextId++;
    return new Promise<Result<M>>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new HostError("HOST_UNREACHABLE", `planhost did not answer ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.socket.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  }

  /** Closes the connection (the host cancels what it still runs for it). */
  close(): void {
    this.closed = true;
    this.socket.end();
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    let newline = this.buffer.indexOf("\n");
    while (newline >= 0) {
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      newline = this.buffer.indexOf("\n");
      if (line.trim() === "") continue;
      let message: any;
      try {
        message = JSON.parse(line);
      } catch {
        continue;
      }
      if (message.id === undefined || message.id === null) {
        if (typeof message.method === "string") this.listener(message.method, message.params);
        continue;
      }
      const pending = this.pending.get(message.id);
      if (!pending) continue;
      this.pending.delete(message.id);
      clearTimeout(pending.timer);
      if (message.error) {
        pending.reject(new HostError(message.error.data?.code ?? "INTERNAL_ERROR", message.error.message));
      } else {
        pending.resolve(message.result);
      }
    }
  }

  private fail(error: HostError): void {
    const wasOpen = !this.closed;
    this.closed = true;
    if (wasOpen) queueMicrotask(this.onLost);
    for (const [, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
    this.pending.clear();
  }
}

function tryConnect(path: string): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    if (!existsSync(path)) return resolve(undefined);
    const socket = connect(path);
    socket.once("connect", () => resolve(socket));
    socket.once("error", () => resolve(undefined));
  });
}

/** Starts `planhost serve` in the background, detached from pi (it outlives this session). */
function startHost(socket: string, stateDir: string | undefined): void {
  const bin = process.env.PLANHOST_BIN || "planhost";
  const args = ["serve", "--socket", socket];
  if (stateDir) args.push("--state-dir", stateDir);
  try {
    const child = spawn(bin, args, { detached: true, stdio: "ignore" });
    child.on("error", () => {});
    child.unref();
  } catch {
    // Reported by the connection attempts that follow.
  }
}

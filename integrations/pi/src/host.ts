// The connection to planhost: JSON-RPC 2.0, one object per line, over the host's unix socket.
// When no host answers, the host is started (`PLANHOST_BIN`, else the binary of the `planhost`
// npm package this extension depends on, else `planhost` on PATH). Every failure here is
// reported to the caller, which fails closed.
import { spawn } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { connect, type Socket } from "node:net";
import { homedir } from "node:os";
import { delimiter, isAbsolute, join } from "node:path";

import { PI_ROLES, type Params, type Result } from "./contract.ts";
import type { MethodName, Notifications } from "./protocol.d.ts";

/** A refusal or failure, with planhost's stable code. */
export class HostError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The protocol version this extension speaks (planhost's `PROTOCOL_VERSION`). */
export const PROTOCOL_VERSION = 2;

/** How long one request may take before it is treated as a failure (fail closed). */
const REQUEST_TIMEOUT_MS = 30_000;
/** How long a host we started has to come up. */
const START_TIMEOUT_MS = 10_000;

/** Where planhost keeps its state and socket, as `planhost` itself resolves them (Rust's
 * `Paths::resolve`; `test/paths.test.ts` holds this to the table that code writes). `stateDir`
 * is the explicit one (`PLANHOST_STATE_DIR`), passed on to a host this extension starts;
 * `resolvedStateDir` is where the state lives either way. An empty variable counts as unset. */
export function locations(env: NodeJS.ProcessEnv = process.env): {
  socket: string;
  stateDir: string | undefined;
  resolvedStateDir: string;
} {
  const stateDir = env.PLANHOST_STATE_DIR || undefined;
  const resolvedStateDir =
    stateDir ??
    (env.XDG_STATE_HOME ? join(env.XDG_STATE_HOME, "planhost") : join(env.HOME || homedir(), ".local/state/planhost"));
  const socket =
    env.PLANHOST_SOCKET ||
    (!stateDir && env.XDG_RUNTIME_DIR ? join(env.XDG_RUNTIME_DIR, "planhost.sock") : join(resolvedStateDir, "planhost.sock"));
  return { socket, stateDir, resolvedStateDir };
}

/** What the user is told when planhost cannot be reached. */
export function unreachableHelp(socket: string): string {
  return (
    `planhost is not reachable on ${socket}: no tool runs without it (fail closed). ` +
    "Start it with `planhost serve` in another terminal; this session reconnects by itself."
  );
}

/** The `planhost` npm package's binary for this machine (the launcher package this extension
 * depends on, installed with it by `pi install npm:pi-planhost`): its path, or why there is none.
 * `undefined` when the package is not installed at all (a checkout run with `pi -e`). */
export function packagedBinary(
  resolve: (id: string) => unknown = createRequire(import.meta.url),
): { path: string } | { missing: string } | undefined {
  let launcher: { binaryPath: (name?: string) => string };
  try {
    launcher = resolve("planhost") as typeof launcher;
  } catch {
    return undefined;
  }
  try {
    return { path: launcher.binaryPath("planhost") };
  } catch (error) {
    return { missing: error instanceof Error ? error.message : String(error) };
  }
}

/** The planhost binary to start: `PLANHOST_BIN`, else the `planhost` package's, else
 * `planhost` on `PATH`; `undefined` when there is none (said at once, never after a start
 * timeout). */
export function findBinary(
  env: NodeJS.ProcessEnv = process.env,
  packaged: () => ReturnType<typeof packagedBinary> = packagedBinary,
): string | undefined {
  const executable = (path: string) => {
    try {
      accessSync(path, constants.X_OK);
      return statSync(path).isFile();
    } catch {
      return false;
    }
  };
  const named = env.PLANHOST_BIN;
  if (named) {
    if (isAbsolute(named) || named.includes("/")) return executable(named) ? named : undefined;
  } else {
    const found = packaged();
    if (found && "path" in found) return found.path;
  }
  const name = named || "planhost";
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir && executable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** Why there is no binary to start. */
export function missingBinaryHelp(
  env: NodeJS.ProcessEnv = process.env,
  packaged: () => ReturnType<typeof packagedBinary> = packagedBinary,
): string {
  const named = env.PLANHOST_BIN;
  if (named) {
    return `PLANHOST_BIN names ${named}, which is not an executable file; set PLANHOST_BIN to the planhost binary, or unset it to use the one pi-planhost brought`;
  }
  const found = packaged();
  if (found && "missing" in found) {
    return `no host answers, no planhost on PATH, and the planhost package pi-planhost depends on has no binary here:\n${found.missing}`;
  }
  return (
    "no host answers, no planhost on PATH, and the planhost npm package is not installed beside this extension; " +
    "install the extension from npm (`pi install npm:pi-planhost`, which brings planhost), or install planhost " +
    "(`npm install -g planhost`, or `cargo install --locked planhost`), or set PLANHOST_BIN to the planhost binary"
  );
}

/** The pid in the state directory's lock file: the host serving it, if one runs. */
function lockHolder(stateDir: string): string | undefined {
  try {
    const pid = readFileSync(join(stateDir, "planhost.lock"), "utf8").trim();
    return /^\d+$/.test(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** What the person is told when the host speaks another protocol: which side is older, and
 * the command that updates it. `message` is the host's refusal (it names its version), or
 * `hostVersion` the version a host answered with. */
export function protocolHelp(
  socket: string,
  clientVersion: string,
  refusal: { message?: string; hostVersion?: number },
  holder?: string,
): string {
  const said = refusal.message?.match(/this planhost speaks v(\d+)/);
  const host = refusal.hostVersion ?? (said ? Number(said[1]) : undefined);
  const head = `the planhost host on ${socket} speaks protocol ${host === undefined ? "another version" : `v${host}`}; this extension (pi-planhost ${clientVersion}) speaks v${PROTOCOL_VERSION}, so it refuses to use that host (no tool runs).`;
  const stop = `stop that host (\`planhost stop\`${holder ? `, or end pid ${holder}` : ""}): this session then starts the planhost it brought`;
  if (host !== undefined && host > PROTOCOL_VERSION) {
    return `${head} Update the extension: \`pi update\` (or \`pi install npm:pi-planhost@latest\`).`;
  }
  if (host !== undefined && host < PROTOCOL_VERSION) {
    return `${head} Update planhost to ${clientVersion} (\`npm install -g planhost@${clientVersion}\`, or \`cargo install --locked planhost@${clientVersion}\`), or ${stop}.`;
  }
  return `${head} Update whichever of pi-planhost and planhost is older so both are ${clientVersion}, or ${stop}.${refusal.message ? ` The host said: ${refusal.message}` : ""}`;
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
  static async open(
    listener: Listener,
    clientVersion: string,
    onLost: () => void = () => {},
    start = true,
  ): Promise<Host> {
    const { socket: path, stateDir, resolvedStateDir } = locations();
    let socket = await tryConnect(path);
    if (!socket && start) {
      const bin = findBinary();
      if (!bin) throw new HostError("HOST_BINARY_NOT_FOUND", missingBinaryHelp());
      const child = startHost(bin, path, stateDir);
      const deadline = Date.now() + START_TIMEOUT_MS;
      while (!socket && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        socket = await tryConnect(path);
        if (!socket && child.exited !== undefined) {
          throw new HostError(
            "HOST_START_FAILED",
            `${bin} serve exited (${child.exited}) before it answered on ${path}; run \`planhost doctor\` to see why`,
          );
        }
      }
    }
    if (!socket) throw new HostError("HOST_UNREACHABLE", unreachableHelp(path));
    // An idle connection does not keep pi alive (`pi -p` exits); a request in flight does,
    // through its own timer.
    socket.unref();
    const host = new Host(socket, listener, path, onLost);
    let hello: Result<"initialize">;
    try {
      hello = await host.call("initialize", {
        protocolVersion: PROTOCOL_VERSION,
        clientName: "pi-planhost",
        clientVersion,
        // pi is both the agent and the person's UI: its dialogs answer approvals.
        roles: [...PI_ROLES],
        // Only its own session's events: another session's changes cost this connection nothing.
        events: "own",
      });
    } catch (error) {
      if (error instanceof HostError && error.code === "PROTOCOL_VERSION_MISMATCH") {
        host.close();
        throw new HostError(
          error.code,
          protocolHelp(path, clientVersion, { message: error.message }, lockHolder(resolvedStateDir)),
        );
      }
      throw error;
    }
    if (hello.protocolVersion !== PROTOCOL_VERSION) {
      host.close();
      throw new HostError(
        "PROTOCOL_VERSION_MISMATCH",
        protocolHelp(path, clientVersion, { hostVersion: hello.protocolVersion }, lockHolder(resolvedStateDir)),
      );
    }
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

/** Starts `planhost serve` in the background, detached from pi (it outlives this session).
 * `exited` is set if it ends before it answers. `PLANHOST_WEB=1` (or an address) also serves
 * the web approval page, on a free port when the default one is taken. */
function startHost(bin: string, socket: string, stateDir: string | undefined): { exited?: string } {
  const state: { exited?: string } = {};
  const args = ["serve", "--socket", socket];
  if (stateDir) args.push("--state-dir", stateDir);
  const web = process.env.PLANHOST_WEB;
  if (web && web !== "0") {
    args.push("--web");
    if (web !== "1") args.push(web);
  }
  try {
    const child = spawn(bin, args, { detached: true, stdio: "ignore" });
    child.on("error", (error) => {
      state.exited = error.message;
    });
    child.on("exit", (code, signal) => {
      state.exited = signal ? `signal ${signal}` : `exit status ${code}`;
    });
    child.unref();
  } catch (error) {
    state.exited = error instanceof Error ? error.message : String(error);
  }
  return state;
}

"use strict";
// Where this machine's planhost binary is: in the @planhost/<os>-<cpu> package that npm
// installs beside this one as an optional dependency (npm picks the one whose `os`, `cpu` and
// `libc` match). The pi extension asks here too, so it starts the native binary directly.

const fs = require("node:fs");
const { constants } = require("node:os");
const path = require("node:path");

const manifest = require("../package.json");
const platforms = require("../platforms.json");

/** This package's version; the platform package and the binary carry the same one. */
const VERSION = manifest.version;

/** `linux-x64` for this machine (or the one given). */
function platformKey(platform = process.platform, arch = process.arch) {
  return `${platform}-${arch}`;
}

/** Whether this Linux runs on musl (Alpine and the like), where the glibc builds do not run. */
function isMusl() {
  if (process.platform !== "linux") return false;
  try {
    const report = process.report && process.report.getReport();
    return Boolean(report && report.header && !report.header.glibcVersionRuntime);
  } catch {
    return false;
  }
}

/** What to run when no binary can be had here. */
function fallback() {
  return (
    `Build it from source instead (needs a Rust toolchain, https://rustup.rs): ` +
    `cargo install --locked planhost@${VERSION}`
  );
}

/** Why there is no binary for `key`, and what to do: every sentence a person needs. */
function missingMessage(key = platformKey(), found = {}) {
  const entry = platforms.find((p) => `${p.os}-${p.cpu}` === key);
  const published = platforms.filter((p) => p.published).map((p) => `${p.os}-${p.cpu}`);
  const lines = [];
  if (!entry || !entry.published) {
    lines.push(`planhost: no planhost binary for this machine (${key}) in the npm package.`);
    lines.push(`planhost's npm packages carry binaries for ${published.join(" and ")}.`);
    if (entry && entry.note) lines.push(`${key}: ${entry.note}.`);
  } else if (entry.libc === "glibc" && (found.musl ?? isMusl())) {
    lines.push(`planhost: no planhost binary for this machine (${key}, musl libc) in the npm package.`);
    lines.push(`The ${entry.package} binary needs glibc; this machine's C library is musl (Alpine or the like).`);
  } else {
    const pkg = `${entry.package}@${VERSION}`;
    lines.push(
      found.problem
        ? `planhost: the binary for this machine (${key}) cannot be used: ${found.problem}.`
        : `planhost: the binary for this machine (${key}) is missing: the package ${pkg} is not installed beside planhost.`,
    );
    lines.push(
      "npm leaves it out when optional dependencies are omitted (--omit=optional, --no-optional) " +
        "or when its download failed. Install planhost again without omitting them, e.g. " +
        `\`npm install -g planhost@${VERSION}\`.`,
    );
  }
  lines.push(fallback());
  return lines.join("\n");
}

/** The binary could not be found; the message says why and what to do. */
class MissingBinaryError extends Error {
  constructor(message) {
    super(message);
    this.name = "MissingBinaryError";
    this.code = "HOST_BINARY_NOT_FOUND";
  }
}

/** The absolute path of `name` (`planhost` or `planhost-hook`) for this machine; throws a
 * MissingBinaryError that says what to do when there is none. */
function binaryPath(name = "planhost") {
  const key = platformKey();
  const entry = platforms.find((p) => p.published && `${p.os}-${p.cpu}` === key);
  if (!entry) throw new MissingBinaryError(missingMessage(key));
  let dir;
  try {
    dir = path.dirname(require.resolve(`${entry.package}/package.json`));
  } catch {
    throw new MissingBinaryError(missingMessage(key));
  }
  const file = path.join(dir, "bin", `${name}${entry.exe}`);
  let problem;
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) problem = `${file} is not a file`;
    else fs.accessSync(file, fs.constants.X_OK);
  } catch (error) {
    problem = problem ?? `${file}: ${error.code === "ENOENT" ? "no such file" : error.message}`;
  }
  if (problem) throw new MissingBinaryError(missingMessage(key, { problem }));
  return file;
}

/** The platform package's version, when it differs from this one's (a half-updated install). */
function versionSkew(binary) {
  try {
    const theirs = JSON.parse(fs.readFileSync(path.join(path.dirname(binary), "..", "package.json"), "utf8"));
    return theirs.version === VERSION ? undefined : `${theirs.name}@${theirs.version}`;
  } catch {
    return undefined;
  }
}

// Signals a person or a supervisor sends to the launcher, handed to the binary. SIGINT from a
// terminal reaches both already (one process group); planhost takes a second one as the same
// request. SIGUSR1 stays node's (its inspector).
const { signals } = constants;
const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR2", "SIGBREAK"];

/** Runs `name` with this process's arguments, stdio, exit status and signals. `failStatus`
 * is the exit status when there is no binary (a hook uses 2, which its agent takes as "block
 * the tool": failing closed). */
function run(name, failStatus) {
  let binary;
  try {
    binary = binaryPath(name);
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(failStatus);
  }
  const skew = versionSkew(binary);
  if (skew) {
    process.stderr.write(
      `planhost: warning: the launcher is planhost@${VERSION} but the binary comes from ${skew}; ` +
        `install planhost again (\`npm install -g planhost@${VERSION}\`) so they agree.\n`,
    );
  }
  const { spawn } = require("node:child_process");
  const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
  const handlers = FORWARDED.filter((signal) => signal in signals).map((signal) => {
    const handler = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    };
    process.on(signal, handler);
    return [signal, handler];
  });
  child.on("error", (error) => {
    process.stderr.write(`planhost: could not run ${binary}: ${error.message}\n${fallback()}\n`);
    process.exit(failStatus);
  });
  child.on("exit", (code, signal) => {
    for (const [name, handler] of handlers) process.off(name, handler);
    if (signal) {
      // End the same way, so whoever waits on this launcher sees the binary's end.
      process.exitCode = 128 + (signals[signal] ?? 0);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code ?? 1);
  });
}

module.exports = { VERSION, binaryPath, missingMessage, platformKey, run, MissingBinaryError };

// How the extension finds the binary it starts (PLANHOST_BIN, then the planhost npm package it
// depends on, then PATH), and that it refuses a host of another protocol version, saying which
// package to update.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { findBinary, Host, HostError, missingBinaryHelp, packagedBinary, PROTOCOL_VERSION } from "../src/host.ts";

const dir = mkdtempSync(join(tmpdir(), "pi-planhost-host-"));
const onPath = join(dir, "planhost");
writeFileSync(onPath, "#!/bin/sh\n");
chmodSync(onPath, 0o755);

test("the planhost package's binary comes before PATH, PLANHOST_BIN before both", () => {
  const packaged = () => ({ path: "/pkg/bin/planhost" });
  assert.equal(findBinary({ PATH: dir }, packaged), "/pkg/bin/planhost");
  assert.equal(findBinary({ PATH: dir, PLANHOST_BIN: onPath }, packaged), onPath);
  assert.equal(findBinary({ PATH: dir }, () => undefined), onPath);
  assert.equal(findBinary({ PATH: dir }, () => ({ missing: "none here" })), onPath);
  assert.equal(findBinary({ PATH: "/nowhere" }, () => ({ missing: "none here" })), undefined);
});

test("packagedBinary asks the launcher package, and says why it has none", () => {
  const launcher = (binaryPath: (name?: string) => string) => () => ({ binaryPath });
  assert.deepEqual(packagedBinary(launcher(() => "/x/planhost")), { path: "/x/planhost" });
  assert.deepEqual(
    packagedBinary(
      launcher(() => {
        throw new Error("planhost: no planhost binary for this machine (linux-ppc64)");
      }),
    ),
    { missing: "planhost: no planhost binary for this machine (linux-ppc64)" },
  );
  const notInstalled = () => {
    throw Object.assign(new Error("Cannot find module 'planhost'"), { code: "MODULE_NOT_FOUND" });
  };
  assert.equal(packagedBinary(notInstalled), undefined);
  const help = missingBinaryHelp({}, () => ({ missing: "planhost: no planhost binary for this machine (linux-ppc64)" }));
  assert.match(help, /linux-ppc64/);
  assert.match(missingBinaryHelp({}, () => undefined), /pi install npm:pi-planhost/);
});

/** A host that refuses `initialize` as planhost does when it speaks protocol `version`. */
async function refusingHost(version: number): Promise<{ socket: string; close: () => void }> {
  const socket = join(mkdtempSync(join(tmpdir(), "pi-planhost-sock-")), "planhost.sock");
  const server = createServer((conn) => {
    conn.setEncoding("utf8");
    conn.on("data", (chunk: string) => {
      const request = JSON.parse(chunk.split("\n")[0] ?? "{}");
      const error = {
        code: -32001,
        message: `client ${request.params.clientName} speaks protocol v${request.params.protocolVersion}, this planhost speaks v${version}`,
        data: { code: "PROTOCOL_VERSION_MISMATCH" },
      };
      conn.write(`${JSON.stringify({ jsonrpc: "2.0", id: request.id, error })}\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  return { socket, close: () => server.close() };
}

async function refusal(version: number): Promise<HostError> {
  const host = await refusingHost(version);
  const before = process.env.PLANHOST_SOCKET;
  process.env.PLANHOST_SOCKET = host.socket;
  try {
    await Host.open(() => {}, "9.8.7", () => {}, false);
  } catch (error) {
    assert.ok(error instanceof HostError, String(error));
    return error;
  } finally {
    process.env.PLANHOST_SOCKET = before;
    host.close();
  }
  assert.fail("a host of another protocol was accepted");
}

test("a newer host: the extension refuses it and says to update the extension", async () => {
  const error = await refusal(PROTOCOL_VERSION + 1);
  assert.equal(error.code, "PROTOCOL_VERSION_MISMATCH");
  assert.match(error.message, new RegExp(`speaks protocol v${PROTOCOL_VERSION + 1}`));
  assert.match(error.message, /pi-planhost 9\.8\.7\) speaks v2/);
  assert.match(error.message, /Update the extension: `pi update`/);
});

test("an older host: the extension refuses it and says to update planhost or stop that host", async () => {
  const error = await refusal(PROTOCOL_VERSION - 1);
  assert.equal(error.code, "PROTOCOL_VERSION_MISMATCH");
  assert.match(error.message, /Update planhost to 9\.8\.7 \(`npm install -g planhost@9\.8\.7`/);
  assert.match(error.message, /`planhost stop`/);
});

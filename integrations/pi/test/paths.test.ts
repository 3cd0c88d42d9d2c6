// The socket and state directory the extension connects to are the ones `planhost` itself
// resolves: every case of the table Rust's `Paths::resolve` writes
// (`paths.cases.json`, from `cargo test -p planhost-service paths`) must come out the same here.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { locations } from "../src/host.ts";

type Case = { env: Record<string, string>; stateDir: string; socket: string };

const cases: Case[] = JSON.parse(readFileSync(new URL("./paths.cases.json", import.meta.url), "utf8"));

test("the extension resolves the socket and state directory as planhost does", () => {
  assert.ok(cases.length >= 10, `the table has its cases (${cases.length})`);
  for (const c of cases) {
    const got = locations(c.env);
    assert.deepEqual(
      { socket: got.socket, stateDir: got.resolvedStateDir },
      { socket: c.socket, stateDir: c.stateDir },
      `env ${JSON.stringify(c.env)}`,
    );
  }
});

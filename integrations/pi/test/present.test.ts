// What the extension shows a person and sends the model, where an end-to-end run cannot look
// closely: the footer, the deadline in local time, the text a handoff is matched by, and the
// binary lookup that names a missing planhost at once. Run by
// `cargo test -p planhost --test pi the_extensions_unit_tests_pass` (node's own test runner).
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { findBinary, missingBinaryHelp } from "../src/host.ts";
import { localTime, messageText, statusText } from "../src/plan.ts";

test("the footer says what Plan mode is doing and what to do", () => {
  assert.equal(statusText("agent", "inactive"), undefined);
  assert.equal(statusText("plan", "planning"), "plan · planning");
  assert.match(statusText("plan", "awaiting_approval") ?? "", /\/plan to answer/);
  assert.match(statusText("plan", "stopped") ?? "", /prompt to plan again/);
});

test("a deadline today is a local time; another day carries its date", () => {
  const now = new Date(2026, 11, 1, 12, 0, 0);
  const today = localTime(new Date(2026, 11, 1, 12, 30, 5).getTime(), now);
  assert.ok(!today.includes("2026"), today);
  assert.ok(today.includes("30"), today);
  const tomorrow = localTime(new Date(2026, 11, 2, 0, 10, 0).getTime(), now);
  assert.ok(tomorrow.length > today.length, `${tomorrow} vs ${today}`);
});

test("a message's text joins its text parts and ignores the rest", () => {
  assert.equal(messageText("plain"), "plain");
  assert.equal(
    messageText([
      { type: "text", text: "a" },
      { type: "image", data: "x" },
      { type: "text", text: "b" },
    ]),
    "a\nb",
  );
  assert.equal(messageText(undefined), "");
});

test("the binary is PLANHOST_BIN when it is executable, else planhost on PATH, else none", () => {
  const dir = mkdtempSync(join(tmpdir(), "phbin"));
  const bin = join(dir, "planhost");
  writeFileSync(bin, "#!/bin/sh\n");
  chmodSync(bin, 0o755);
  assert.equal(findBinary({ PLANHOST_BIN: bin, PATH: "" }), bin);
  assert.equal(findBinary({ PATH: `/nonexistent:${dir}` }), bin);
  assert.equal(findBinary({ PATH: "/nonexistent" }), undefined);
  const missing = join(dir, "nope");
  assert.equal(findBinary({ PLANHOST_BIN: missing, PATH: dir }), undefined);
  assert.match(missingBinaryHelp({ PLANHOST_BIN: missing }), /PLANHOST_BIN names .*nope/);
  assert.match(missingBinaryHelp({}), /no planhost on PATH/);
  // Not executable: named, but not found.
  chmodSync(bin, 0o644);
  assert.equal(findBinary({ PLANHOST_BIN: bin, PATH: "" }), undefined);
});

// The extension's reuse of the projection `checkpoints.capture` returns: when it may stand in for
// a `checkpoints.projection` call before the next model call, and when it must not. Run by
// `cargo test -p planhost --test pi the_extensions_unit_tests_pass` (node's own test runner).
import assert from "node:assert/strict";
import { test } from "node:test";

import { PlanhostSession } from "../src/session.ts";

const projection = (revision: number) => ({ text: `<plan_checkpoint revision="${revision}">`, revision });

function session(): PlanhostSession {
  const s = new PlanhostSession({} as any);
  s.sessionId = "s1";
  return s;
}

/** A `state.changed` as the host sends it. */
function event(s: PlanhostSession, sessionId: string, seq: number): void {
  (s as any).dispatch("state.changed", { sessionId, seq, at: 0, kind: "checkpointSaved" });
}

test("used once, for the branch it was read on or one that extends it", () => {
  const s = session();
  s.rememberProjection(["a", "b"], projection(1), s.projectionMark(), 3);
  assert.deepEqual(s.takeProjection(["a", "b", "c"]), projection(1));
  assert.equal(s.takeProjection(["a", "b", "c"]), undefined, "once");
});

test("not for another branch", () => {
  const s = session();
  s.rememberProjection(["a", "b"], projection(1), s.projectionMark(), 3);
  assert.equal(s.takeProjection(["a", "x", "c"]), undefined);
  s.rememberProjection(["a", "b"], projection(1), s.projectionMark(), 3);
  assert.equal(s.takeProjection(["a"]), undefined, "a shorter branch");
});

test("dropped by any later change of the session, kept through another session's", () => {
  const s = session();
  s.rememberProjection(["a"], projection(1), s.projectionMark(), 3);
  event(s, "other", 9);
  assert.deepEqual(s.takeProjection(["a"]), projection(1));
  s.rememberProjection(["a"], projection(1), s.projectionMark(), 3);
  event(s, "s1", 4);
  assert.equal(s.takeProjection(["a"]), undefined);
});

test("not kept when a newer change arrived before the capture's reply", () => {
  const s = session();
  const mark = s.projectionMark();
  event(s, "s1", 7);
  s.rememberProjection(["a"], projection(1), mark, 5);
  assert.equal(s.takeProjection(["a"]), undefined);
  // One current at the newest event seen is kept.
  s.rememberProjection(["a"], projection(2), s.projectionMark(), 7);
  assert.deepEqual(s.takeProjection(["a"]), projection(2));
});

test("not kept when a model call started while the capture was on its way", () => {
  const s = session();
  const mark = s.projectionMark();
  assert.equal(s.takeProjection(["a"]), undefined, "the model call, with nothing kept");
  s.rememberProjection(["a"], projection(1), mark, 3);
  assert.equal(s.takeProjection(["a"]), undefined);
});

test("forgotten on request (/tree) and when the host reports nothing", () => {
  const s = session();
  s.rememberProjection(["a"], projection(1), s.projectionMark(), 3);
  s.forgetProjection();
  assert.equal(s.takeProjection(["a"]), undefined);
  s.rememberProjection(["a"], null, s.projectionMark(), 3);
  assert.equal(s.takeProjection(["a"]), undefined);
});

// The typed view of planhost's protocol the extension builds on: a method's params and result
// come from the generated declarations, so a call that does not match the host's contract does
// not type-check.
import type { ExecuteOutputOf, MethodAccess, MethodName, Methods, Notifications } from "./protocol.d.ts";

export type Params<M extends MethodName> = Methods[M]["params"];
export type Result<M extends MethodName> = Methods[M]["result"];
export type NotificationName = keyof Notifications;
export type Payload<N extends NotificationName> = Notifications[N];
export type Access<M extends MethodName> = MethodAccess[M];

/** A tool the host runs with `tools.execute`. */
export type ExecutedTool = keyof ExecuteOutputOf;

/** The output of a `tools.execute` call of `tool`. The host answers a call with the result of
 * the tool it named, untagged (the wire shape of each tool's result); the generated
 * `ExecuteOutputOf` says which result type that is, so this is the one place it is read so. */
export function outputOf<T extends ExecutedTool>(_tool: T, result: Result<"tools.execute">): ExecuteOutputOf[T] {
  return result.output as ExecuteOutputOf[T];
}

/** A client that can call any method of the contract. */
export interface Caller {
  call<M extends MethodName>(method: M, params: Params<M>): Promise<Result<M>>;
}

/** The roles the pi extension declares: it is both the agent and the person's UI. */
export const PI_ROLES = ["agent", "approver"] as const;

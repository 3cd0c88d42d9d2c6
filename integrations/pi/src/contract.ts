// The typed view of planhost's protocol the extension builds on: a method's params and result
// come from the generated declarations, so a call that does not match the host's contract does
// not type-check.
import type { MethodAccess, MethodName, Methods, Notifications } from "./protocol.d.ts";

export type Params<M extends MethodName> = Methods[M]["params"];
export type Result<M extends MethodName> = Methods[M]["result"];
export type NotificationName = keyof Notifications;
export type Payload<N extends NotificationName> = Notifications[N];
export type Access<M extends MethodName> = MethodAccess[M];

/** A client that can call any method of the contract. */
export interface Caller {
  call<M extends MethodName>(method: M, params: Params<M>): Promise<Result<M>>;
}

/** The roles the pi extension declares: it is both the agent and the person's UI. */
export const PI_ROLES = ["agent", "approver"] as const;

/**
 * An operator caller as JSON carries it between replicas (issue 39): in a forwarded call's identity
 * header (`host/api/forwarded-call`) and in a shared download ticket's record (`store/redis`). Its
 * environments go as a sorted list, `null` for every one; the codec takes nothing else.
 */
import * as t from 'io-ts';
import { struct } from './struct';

/** The JSON of a caller: its token's name, role and environments (`null`: every one). */
export const CallerJson = struct('CallerJson', {
  name: t.string,
  role: t.union([t.literal('view'), t.literal('operate')]),
  environments: t.union([t.array(t.string), t.null]),
});
/** A caller's JSON. */
export type CallerJson = t.TypeOf<typeof CallerJson>;

/** A caller as the host holds it (`OperatorCaller`, `TicketCaller`). */
export interface Caller {
  readonly name: string;
  readonly role: 'view' | 'operate';
  readonly environments: ReadonlySet<string> | undefined;
}

/** `caller` as JSON: its environments sorted (the same caller, the same JSON), or `null` for every one. */
export const callerJsonOf = (caller: Caller): CallerJson => ({
  name: caller.name,
  role: caller.role,
  environments: caller.environments === undefined ? null : [...caller.environments].sort(),
});

/** The caller `json` names. */
export const callerOfJson = (json: CallerJson): Caller => ({
  name: json.name,
  role: json.role,
  environments: json.environments === null ? undefined : new Set(json.environments),
});

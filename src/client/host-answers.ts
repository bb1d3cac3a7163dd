/**
 * The operator API's answers read as what each `HostClient` call resolves with. An answer that decodes
 * as something else is a HostApiError `DECODE_FAILED` naming the call and what it expected.
 */
import * as E from 'fp-ts/lib/Either';
import type { DecodeError } from '../errors';
import { HostApiError } from './host-api-error';
import type { ApiAnswer } from './host-connection';
import type { HostInfo, LogUrlOptions, ProcessResource, WaitResult } from './host-types';
import { decodeWith } from '../wire/decode';
import { HostAnswer, LogTicket, ProcessResource as ProcessResourceCodec, TerminateResult, WaitResult as WaitResultCodec } from '../wire/operator-api';

const decodeProcess = decodeWith(ProcessResourceCodec);
const decodeTerminate = decodeWith(TerminateResult);
const decodeWait = decodeWith(WaitResultCodec);
const decodeHost = decodeWith(HostAnswer);
const decodeTicket = decodeWith(LogTicket);

/** `answer`'s body as `decode` reads it, or DECODE_FAILED: `call: the host answered something else than expected: why`. */
export function decoded<A>(answer: ApiAnswer, decode: (input: unknown) => E.Either<DecodeError, A>, call: string, expected: string): A {
  const result = decode(answer.body);
  if (E.isRight(result)) return result.right;
  const message = `${call}: the host answered something else than ${expected}: ${result.left.message}`;
  throw new HostApiError('DECODE_FAILED', message, answer.status, answer.hostInstance);
}

/** `GET …/host`'s answer: the host instance and who the caller is. */
export function hostInfoOf(answer: ApiAnswer): HostInfo {
  const host = decoded(answer, decodeHost, 'host', 'who the caller is');
  const { name, role, environments } = host.caller;
  return { hostInstance: host.hostInstance, caller: { name, role, environments } };
}

/** `POST …/log/tickets`' answer: the absolute url of the download (under `baseUrl`), with `&stream=` when one is asked. */
export function logUrlOf(answer: ApiAnswer, baseUrl: string, stream: LogUrlOptions['stream']): string {
  const ticket = decoded(answer, decodeTicket, 'logUrl', 'a ticket');
  const url = new URL(ticket.url, `${baseUrl}/`);
  if (stream !== undefined) url.searchParams.set('stream', stream);
  return url.toString();
}

/** A start's answer: the process. */
export const startedOf = (answer: ApiAnswer): ProcessResource => decoded(answer, decodeProcess, 'start', 'a process');

/** `POST …/wait`'s answer: the exit code and when the host saw the exit. */
export const exitOf = (answer: ApiAnswer): WaitResult => decoded(answer, decodeWait, 'wait', 'an exit');

/** `POST …/terminate`'s answer: whether the process was running. */
export const wasRunning = (answer: ApiAnswer): boolean => decoded(answer, decodeTerminate, 'terminate', 'whether it was running').running;

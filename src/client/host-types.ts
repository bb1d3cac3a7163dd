/** What the client hands its users: the API's resources, and process events with bytes decoded. */
import type { EnvironmentResource, ProcessResource, StartProcessRequest } from '../wire/operator-api';

export type { EnvironmentResource, ProcessResource, StartProcessRequest } from '../wire/operator-api';

/** An environment with its processes, as the overview stream shows it. */
export type EnvironmentOverview = EnvironmentResource & { readonly processes: readonly ProcessResource[] };

/** A process event as `HostClient.events$` emits it. `chunk` holds the raw bytes. */
export type HostProcessEvent =
  | { readonly type: 'output'; readonly seq: number; readonly stream: 'stdout' | 'stderr' | 'pty'; readonly chunk: Uint8Array }
  | { readonly type: 'exited'; readonly seq: number; readonly exitCode: number }
  /** The last event: every output byte came before it. */
  | { readonly type: 'closed'; readonly seq: number }
  /** Neither the host's history nor the executor's window holds what was asked: the events that follow start at `nextSeq`. */
  | { readonly type: 'truncated'; readonly nextSeq: number; readonly droppedEvents: number };

/** What `HostClient.start` takes: the request, with an optional key (one is made per call otherwise). */
export interface StartOptions {
  /** Aborting stops waiting (and retrying); the start may still have happened. */
  readonly signal?: AbortSignal;
  /** The Idempotency-Key; retries of this call reuse it. @default a fresh random UUID per call */
  readonly idempotencyKey?: string;
}

/** Re-exported for convenience: the body of a start. */
export type StartRequest = StartProcessRequest;

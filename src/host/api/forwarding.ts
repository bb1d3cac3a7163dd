/**
 * Forwarding between replicas (issue 39): a call that needs an environment's owner (a start, a stdin
 * write, an interrupt, a resize, a terminate, a release, a wait: the rows' `TokenRoute.owner` methods) and
 * lands on another replica is forwarded by that replica to the owner, at the internal url the owner
 * advertises in the shared store (renewed with its leases), so that any replica serves any call.
 *
 * The replica that got the call checked the operator's token, its rate and its role; the owner trusts the
 * forwarded identity (token name, role, environments) only when the request is signed with a replica key
 * it accepts (`./replica-keys`). Headers that claim a forwarded identity are stripped from every request
 * that is not so signed: a client cannot claim one. A signed forward is never forwarded again (the hop
 * count is signed): if the owner moved meanwhile, the replica answers 503 `ENVIRONMENT_ELSEWHERE` itself.
 *
 * Both ways stream: the request body is piped to the owner as it arrives, the answer back as it comes
 * (a `…/wait` long poll, a stdin body); a client that goes away ends the forwarded request. Each forward
 * is one connection to the owner (no keep-alive: a connection the owner closed while idle would fail a
 * call whose body is already spent), over TLS when the owner's internal url is `https` (checked against
 * `--internal-ca`, or the system's CAs).
 *
 * Failures: the owner cannot be reached (no url advertised, the connection refused or not made within
 * {@link CONNECT_TIMEOUT_MS}) → 503 `ENVIRONMENT_ELSEWHERE` with `Retry-After`, and the owner did nothing;
 * the connection is lost after the request went out and before an answer → 502 `FORWARD_FAILED`: the
 * owner may have acted (a keyed start is safe to retry; an unkeyed one is not). Once the answer's head
 * was sent, a loss ends the client's connection, as a loss on the owner's own connection would.
 */
import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { SchedulerLike, Subscription } from 'rxjs';
import { timer } from 'rxjs';
import { HOP_BY_HOP } from '../../http/http-headers';
import type { ForwardedCall } from './forwarded-call';
import {
  encodeIdentity,
  FORWARDED_AT_HEADER,
  FORWARDED_BY_HEADER,
  FORWARDED_FOR_HEADER,
  FORWARDED_HOPS_HEADER,
  FORWARDED_IDENTITY_HEADER,
  FORWARDED_SIGNATURE_HEADER,
  takeForwarded,
} from './forwarded-call';
import type { OperatorCaller } from './operator-tokens';
import { ApiProblem } from './problem';
import type { ReplicaKeys, SignedForward } from './replica-keys';

export type { ForwardedCall } from './forwarded-call';
export {
  FORWARDED_AT_HEADER,
  FORWARDED_BY_HEADER,
  FORWARDED_FOR_HEADER,
  FORWARDED_HOPS_HEADER,
  FORWARDED_IDENTITY_HEADER,
  FORWARDED_PREFIX,
  FORWARDED_SIGNATURE_HEADER,
  takeForwarded,
} from './forwarded-call';

/** How long a forward waits for its connection to the owner. */
export const CONNECT_TIMEOUT_MS = 2_000;

/** Headers of one connection, never passed on (RFC 9110 §7.6.1: `HOP_BY_HOP`), with the ones a forward sets itself. */
const NOT_PASSED: ReadonlySet<string> = new Set([...HOP_BY_HOP, 'host', 'authorization']);

/** Where a call's owner takes forwarded calls. */
export interface OwnerTarget {
  /** The owner replica's id. */
  readonly owner: string;
  /** Its internal url (`http(s)://host:port`); undefined when it advertises none now. */
  readonly url: string | undefined;
}

/** What a forwarder reads of the cluster. */
export interface OwnerDirectory {
  /** The replica that owns `id` now, when it is not this one. Rejects when the shared store does not answer. */
  ownerElsewhere(id: string): Promise<string | undefined>;
  /** The internal url replica `owner` advertises now. Rejects when the shared store does not answer. */
  replicaUrl(owner: string): Promise<string | undefined>;
}

/** How a replica forwards (see `HostServerOptions.cluster.forwarding`). */
export interface ForwarderOptions {
  /** The keys forwards are signed with and checked against. */
  readonly keys: ReplicaKeys;
  /** This replica's id (the cluster's owner id). */
  readonly self: string;
  /** The CA certificates an owner's `https` internal url is checked against. @default the system's */
  readonly ca?: Buffer;
  /** The host's clock and timers: the signing time (the owner checks it against its own clock), the connect timeout. */
  readonly scheduler: SchedulerLike;
}

const elsewhere = (environmentId: string, owner: string, why: string): ApiProblem =>
  new ApiProblem(503, 'ENVIRONMENT_ELSEWHERE', `environment ${environmentId} is served by another replica (${owner}), which cannot be reached: ${why}; retry`, {
    'retry-after': '1',
  });

/** What a forwarder counted (the host's metrics read it). */
export interface ForwardingFigures {
  /** Calls forwarded and answered by their owner (whatever the answer). */
  readonly answered: number;
  /** Calls not forwarded: the owner could not be reached (503 `ENVIRONMENT_ELSEWHERE`). */
  readonly unreachable: number;
  /** Calls whose connection to the owner was lost before its answer (502 `FORWARD_FAILED`). */
  readonly lost: number;
  /** Signed forwards this replica refused (401 `FORWARD_REFUSED`: another key, out of time, malformed). */
  readonly refused: number;
}

/** Forwards calls to their environment's owner (see the module's doc). Holds no connection between calls: nothing to tear down. */
export class Forwarder {
  private counts = { answered: 0, unreachable: 0, lost: 0, refused: 0 };

  constructor(
    private readonly options: ForwarderOptions,
    private readonly directory: OwnerDirectory,
  ) {}

  /** What it counted so far. */
  figures(): ForwardingFigures {
    return { ...this.counts };
  }

  /** {@link takeForwarded} with this replica's keys and clock, counting the forwards it refuses. */
  take(req: IncomingMessage): ForwardedCall | undefined {
    try {
      return takeForwarded(req, this.options.keys, this.options.scheduler.now());
    } catch (error: unknown) {
      this.counts.refused++;
      throw error;
    }
  }

  /** Where `environmentId`'s owner is, when another replica owns it; undefined when this one does (or none). Rejects when the shared store does not answer. */
  async ownerOf(environmentId: string): Promise<OwnerTarget | undefined> {
    const owner = await this.directory.ownerElsewhere(environmentId);
    if (owner === undefined) return undefined;
    return { owner, url: await this.directory.replicaUrl(owner) };
  }

  /**
   * Forwards `req` for `caller` to `target` (at `path`, by default the request's own) and streams the owner's answer into `res`. Resolves once the
   * answer ended (or the client went away); rejects, before anything was written to `res`, with ApiProblem
   * 503 `ENVIRONMENT_ELSEWHERE` (the owner unreachable) or 502 `FORWARD_FAILED` (see the module's doc).
   */
  forward(req: IncomingMessage, res: ServerResponse, caller: OperatorCaller, environmentId: string, target: OwnerTarget, path: string = req.url ?? '/'): Promise<void> {
    const { owner, url } = target;
    const none = 'it advertises no internal url (stopped, away from the shared store, or without a replica key)';
    if (url === undefined) {
      this.counts.unreachable++;
      return Promise.reject(elsewhere(environmentId, owner, none));
    }
    let base: URL;
    try {
      base = new URL(url);
    } catch {
      this.counts.unreachable++;
      return Promise.reject(elsewhere(environmentId, owner, 'its internal url does not parse'));
    }
    // The owner's route: the request's own, or another one it is sent to (a preview goes to the owner's API).
    const requestTarget = path;
    const signed: SignedForward = {
      method: req.method ?? 'GET',
      target: requestTarget,
      by: this.options.self,
      client: req.socket.remoteAddress ?? '',
      identity: encodeIdentity(caller),
      hops: 1,
      at: this.options.scheduler.now(),
    };
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && !NOT_PASSED.has(name)) headers[name] = value;
    Object.assign(headers, {
      [FORWARDED_BY_HEADER]: signed.by,
      [FORWARDED_FOR_HEADER]: signed.client,
      [FORWARDED_IDENTITY_HEADER]: signed.identity,
      [FORWARDED_HOPS_HEADER]: String(signed.hops),
      [FORWARDED_AT_HEADER]: String(signed.at),
      [FORWARDED_SIGNATURE_HEADER]: this.options.keys.sign(signed),
    });
    const secure = base.protocol === 'https:';
    const options = {
      protocol: base.protocol,
      hostname: base.hostname.replace(/^\[|\]$/g, ''),
      port: base.port === '' ? (secure ? 443 : 80) : Number(base.port),
      method: signed.method,
      path: requestTarget,
      headers,
      agent: false as const,
      ...(secure && this.options.ca !== undefined ? { ca: this.options.ca } : {}),
    };
    return new Promise<void>((resolve, reject) => {
      let connected = false;
      let answered = false;
      const upstream: ClientRequest = secure ? httpsRequest(options) : httpRequest(options);
      const connectTimer: Subscription = timer(CONNECT_TIMEOUT_MS, this.options.scheduler).subscribe(() => {
        if (!connected) upstream.destroy(Object.assign(new Error(`no connection within ${CONNECT_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' }));
      });
      upstream.on('socket', (socket) =>
        socket.once(secure ? 'secureConnect' : 'connect', () => {
          connected = true;
          connectTimer.unsubscribe();
        }),
      );
      upstream.on('error', (error: NodeJS.ErrnoException) => {
        connectTimer.unsubscribe();
        if (answered) return void res.destroy();
        if (res.destroyed) return resolve();
        const why = `${error.code ?? error.message}`;
        if (!connected) {
          this.counts.unreachable++;
          return reject(elsewhere(environmentId, owner, `${url}: ${why}`));
        }
        this.counts.lost++;
        const lost = `the owner replica (${owner}) took the call but the connection was lost before it answered (${why})`;
        reject(new ApiProblem(502, 'FORWARD_FAILED', `${lost}: it may have acted; a keyed start is safe to retry`));
      });
      upstream.on('response', (answer) => {
        answered = true;
        this.counts.answered++;
        connectTimer.unsubscribe();
        const back: OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !NOT_PASSED.has(name)) back[name] = value;
        back[FORWARDED_BY_HEADER] = this.options.self;
        res.writeHead(answer.statusCode ?? 502, back);
        answer.on('error', () => res.destroy());
        answer.on('aborted', () => res.destroy());
        answer.pipe(res);
      });
      // The client went away (or the answer ended): the forwarded request ends too.
      res.on('close', () => {
        connectTimer.unsubscribe();
        if (!res.writableFinished) upstream.destroy();
        resolve();
      });
      req.pipe(upstream);
    });
  }
}

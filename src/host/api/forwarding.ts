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
import type { ClientRequest, IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import * as t from 'io-ts';
import { isRight } from 'fp-ts/Either';
import type { SchedulerLike, Subscription } from 'rxjs';
import { timer } from 'rxjs';
import type { OperatorCaller, OperatorRole } from './operator-tokens';
import { ApiProblem } from './problem';
import type { ReplicaKeys, SignedForward } from './replica-keys';

/** The headers of a forwarded call (every one starting with {@link FORWARDED_PREFIX} is stripped from a call not signed). */
export const FORWARDED_PREFIX = 'exec-rx-forwarded-';
/** The forwarding replica's id; on an answer, the replica that forwarded the call. */
export const FORWARDED_BY_HEADER = 'exec-rx-forwarded-by';
/** The client's address, as the forwarding replica saw it (the audit log records it). */
export const FORWARDED_FOR_HEADER = 'exec-rx-forwarded-for';
/** The forwarded identity: base64url of `{"name","role","environments"}`. */
export const FORWARDED_IDENTITY_HEADER = 'exec-rx-forwarded-identity';
/** The hop count: 1 (a signed forward is never forwarded again). */
export const FORWARDED_HOPS_HEADER = 'exec-rx-forwarded-hops';
/** When the forward was signed (ms since the epoch). */
export const FORWARDED_AT_HEADER = 'exec-rx-forwarded-at';
/** The signature (`v1=<hex>`, see `./replica-keys`). */
export const FORWARDED_SIGNATURE_HEADER = 'exec-rx-forwarded-signature';

/** How long a forward waits for its connection to the owner. */
export const CONNECT_TIMEOUT_MS = 2_000;

/** Headers of one connection, never passed on (RFC 9110 §7.6.1), with the ones a forward sets itself. */
const NOT_PASSED: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'authorization',
]);

const Identity = t.type({ name: t.string, role: t.union([t.literal('view'), t.literal('operate')]), environments: t.union([t.array(t.string), t.null]) });

const encodeIdentity = (caller: OperatorCaller): string =>
  Buffer.from(JSON.stringify({ name: caller.name, role: caller.role, environments: caller.environments === undefined ? null : [...caller.environments].sort() })).toString(
    'base64url',
  );

function decodeIdentity(text: string): OperatorCaller | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const decoded = Identity.decode(parsed);
  if (!isRight(decoded)) return undefined;
  const { name, role, environments } = decoded.right;
  const asRole: OperatorRole = role;
  return { name, role: asRole, environments: environments === null ? undefined : new Set(environments) };
}

/** A call another replica forwarded, signed with a key this replica accepts. */
export interface ForwardedCall {
  /** The identity the forwarding replica authenticated. */
  readonly caller: OperatorCaller;
  /** The forwarding replica's id. */
  readonly by: string;
  /** The client's address, as the forwarding replica saw it. */
  readonly client: string;
}

const headerOf = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * Reads and strips a request's forwarded-call headers. Resolves to undefined for a call that carries no
 * signature (any identity header it claimed is dropped: ignored); the call for one signed with a key in
 * `keys`; throws ApiProblem 401 `FORWARD_REFUSED` for a signed one this replica cannot take (a retired
 * key, a signature out of time, no replica key here, a malformed identity). `now`: this replica's clock.
 */
export function takeForwarded(req: IncomingMessage, keys: ReplicaKeys | undefined, now: number): ForwardedCall | undefined {
  const headers = req.headers;
  const found = Object.keys(headers).filter((name) => name.startsWith(FORWARDED_PREFIX));
  if (found.length === 0) return undefined;
  const value = (name: string): string => headerOf(headers, name) ?? '';
  const signature = headerOf(headers, FORWARDED_SIGNATURE_HEADER);
  const forward: SignedForward = {
    method: req.method ?? 'GET',
    target: req.url ?? '/',
    by: value(FORWARDED_BY_HEADER),
    client: value(FORWARDED_FOR_HEADER),
    identity: value(FORWARDED_IDENTITY_HEADER),
    hops: Number(value(FORWARDED_HOPS_HEADER)),
    at: Number(value(FORWARDED_AT_HEADER)),
  };
  for (const name of found) delete headers[name];
  if (signature === undefined) return undefined;
  if (keys === undefined) throw new ApiProblem(401, 'FORWARD_REFUSED', 'a forwarded call, but this replica has no replica key (--replica-key-file)');
  const refusal = keys.verify(forward, signature, now);
  const why = refusal === 'expired' ? 'signed too long ago' : 'not signed with a key this replica accepts';
  if (refusal !== undefined) throw new ApiProblem(401, 'FORWARD_REFUSED', `a forwarded call refused: ${why}`);
  const caller = decodeIdentity(forward.identity);
  if (caller === undefined || forward.by === '' || forward.hops !== 1) throw new ApiProblem(401, 'FORWARD_REFUSED', 'a forwarded call with a malformed identity');
  return { caller, by: forward.by, client: forward.client };
}

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

/** Forwards calls to their environment's owner (see the module's doc). Holds no connection between calls: nothing to tear down. */
export class Forwarder {
  constructor(
    private readonly options: ForwarderOptions,
    private readonly directory: OwnerDirectory,
  ) {}

  /** The keys this replica signs with and accepts. */
  get keys(): ReplicaKeys {
    return this.options.keys;
  }

  /** Where `environmentId`'s owner is, when another replica owns it; undefined when this one does (or none). Rejects when the shared store does not answer. */
  async ownerOf(environmentId: string): Promise<OwnerTarget | undefined> {
    const owner = await this.directory.ownerElsewhere(environmentId);
    if (owner === undefined) return undefined;
    return { owner, url: await this.directory.replicaUrl(owner) };
  }

  /**
   * Forwards `req` for `caller` to `target` and streams the owner's answer into `res`. Resolves once the
   * answer ended (or the client went away); rejects, before anything was written to `res`, with ApiProblem
   * 503 `ENVIRONMENT_ELSEWHERE` (the owner unreachable) or 502 `FORWARD_FAILED` (see the module's doc).
   */
  forward(req: IncomingMessage, res: ServerResponse, caller: OperatorCaller, environmentId: string, target: OwnerTarget): Promise<void> {
    const { owner, url } = target;
    const none = 'it advertises no internal url (stopped, away from the shared store, or without a replica key)';
    if (url === undefined) return Promise.reject(elsewhere(environmentId, owner, none));
    let base: URL;
    try {
      base = new URL(url);
    } catch {
      return Promise.reject(elsewhere(environmentId, owner, 'its internal url does not parse'));
    }
    const requestTarget = req.url ?? '/';
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
        if (!connected) return reject(elsewhere(environmentId, owner, `${url}: ${why}`));
        const lost = `the owner replica (${owner}) took the call but the connection was lost before it answered (${why})`;
        reject(new ApiProblem(502, 'FORWARD_FAILED', `${lost}: it may have acted; a keyed start is safe to retry`));
      });
      upstream.on('response', (answer) => {
        answered = true;
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

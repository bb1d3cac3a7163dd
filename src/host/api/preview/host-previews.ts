/**
 * HTTP through the environment on a host (docs/operator-api.md, "Previews and fetch"): the preview
 * listener (`--preview-port`, both forms, see `./preview-address`), who may open a preview (a token with
 * `operate` for the environment, a signed link exchanged for a cookie, or anyone for a port an operator
 * made public, rate-limited), and the operator API's rows: links, sharing levels and the fetch route.
 * Off unless `--allow-http`: then every one answers 403 `HTTP_DISABLED`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { SchedulerLike } from 'rxjs';
import { HttpTargetPolicy, LOOPBACK_TARGETS } from '../../../http/target-policy';
import { API_PREFIX } from '../../../wire/operator-api';
import type { PreviewLink, PreviewList, PreviewSharing } from '../../../wire/http-api';
import { RateLimiter } from '../../rate-limiter';
import type { ApiContext } from '../api-context';
import { environmentOf, refuseIfElsewhere } from '../api-context';
import type { OperatorCaller, OperatorTokens } from '../operator-tokens';
import { mayTouch } from '../operator-tokens';
import { ApiProblem, problemOf, sendProblem } from '../problem';
import type { ReplicaKeys } from '../replica-keys';
import type { Route, RouteContext } from '../router';
import type { Forwarder } from '../forwarding';
import { previewRows } from './routes-previews';
import { disabled } from './http-settings';
import type { HttpSettings, HttpOptions } from './http-settings';
import { httpSettings } from './http-settings';
import type { PreviewAddress } from './preview-address';
import { checkPreviewDomain, hostFormAddress, hostFormName, pathFormAddress } from './preview-address';
import type { GrantRefusal, PreviewGrant } from './preview-grants';
import { PreviewGrants, refusalWords } from './preview-grants';
import { cookieValue, PREVIEW_CSP, sessionCookieName } from './preview-headers';
import type { PreviewObserver } from './preview-traffic';
import { PreviewTraffic } from './preview-traffic';

/** The query parameter a preview link carries its grant in (dropped by the redirect that exchanges it for a cookie). */
export const LINK_PARAM = 'exec-rx-preview-link';

/** What the previews need of the host besides the API's context. */
export interface PreviewDeps {
  readonly tokens: OperatorTokens;
  /** The replicas' keys, or a key the host made at start. */
  readonly keys: ReplicaKeys;
  readonly scheduler: SchedulerLike;
  /** The host's own names (its bind address, its public url's host): the preview domain may be neither nor a parent. */
  readonly hostNames: readonly string[];
  readonly observer?: PreviewObserver | undefined;
}

/** The base urls of the preview listener, once it listens. */
interface PreviewBase {
  readonly scheme: 'http' | 'https';
  /** `host:port` of the listener, as a url says it. */
  readonly hostPort: string;
  readonly port: number;
}

/** Previews and the fetch route (see the module's doc). Built by `OperatorApi`; `close()` ends every stream. */
export class HostPreviews {
  readonly settings: HttpSettings;
  readonly rows: readonly Route[];
  private readonly policy: HttpTargetPolicy;
  private readonly grants: PreviewGrants;
  private readonly traffic: PreviewTraffic;
  private readonly sharing = new Map<string, RateLimiter>();
  private readonly stopRevoking: () => void;
  private base: PreviewBase | undefined;
  private forwarder: Forwarder | undefined;
  private readonly domain: string | undefined;

  /** Throws a RangeError or ConfigError for an option that cannot be served. */
  constructor(
    private readonly api: ApiContext,
    options: HttpOptions | undefined,
    private readonly deps: PreviewDeps,
  ) {
    this.settings = httpSettings(options);
    this.domain = this.settings.previewDomain === undefined ? undefined : checkPreviewDomain(this.settings.previewDomain, deps.hostNames);
    this.policy = HttpTargetPolicy.of([...LOOPBACK_TARGETS, ...this.settings.allow]);
    this.grants = new PreviewGrants(deps.keys);
    this.traffic = new PreviewTraffic(this.settings, this.policy, (id) => environmentOf(api, id), deps.scheduler, deps.observer);
    this.stopRevoking = deps.tokens.onRevoke((names) => this.traffic.revoke(names));
    this.rows = previewRows(this, { api, settings: this.settings, policy: this.policy, traffic: this.traffic, observer: deps.observer });
  }

  /** Preview bodies streaming now (the host's metrics read it). */
  get streams(): number {
    return this.traffic.streams;
  }

  /** The preview listener listens at `base` (the links' urls say it). */
  listening(base: PreviewBase): void {
    this.base = base;
  }

  /** Ends every preview stream and stops listening to revocations (the host stops). */
  close(): void {
    this.stopRevoking();
    this.traffic.close();
  }

  /** Answers one request of the preview listener. Never throws: every refusal is problem+json. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    this.serve(req, res).catch((error: unknown) => {
      if (res.headersSent) return void res.destroy();
      const problem = problemOf(error);
      this.deps.observer?.ended('preview', problem.status, 'refused');
      sendProblem(res, problem, this.api.hostInstance);
    });
  }

  /**
   * A WebSocket upgrade on the preview listener: `http/request` cannot carry one, so it is answered 501
   * `UPGRADE_UNSUPPORTED` with a problem that says so (a dev server's hot reload shows as disconnected).
   */
  onUpgrade(_req: IncomingMessage, socket: Duplex): void {
    const body = JSON.stringify({
      type: 'about:blank',
      title: 'Not Implemented',
      status: 501,
      code: 'UPGRADE_UNSUPPORTED',
      detail:
        "previews pass HTTP requests through the executor's http/request, which cannot carry a WebSocket: " +
        'hot reload and other sockets of the app do not work through a preview',
      instance: this.api.hostInstance,
    });
    const head = ['HTTP/1.1 501 Not Implemented', 'connection: close', 'content-type: application/problem+json', `content-length: ${Buffer.byteLength(body)}`];
    if (!socket.destroyed) socket.end(`${head.join('\r\n')}\r\n\r\n${body}`, () => socket.destroy());
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = req.url ?? '/';
    const address = this.addressOf(req, target);
    if (address === 'slash') {
      const queryAt = target.indexOf('?');
      const path = queryAt < 0 ? target : target.slice(0, queryAt);
      res.writeHead(301, { location: `${path}/${queryAt < 0 ? '' : target.slice(queryAt)}`, 'cache-control': 'no-store' }).end();
      this.deps.observer?.ended('preview', 301, 'answered');
      return;
    }
    if (address === undefined) throw new ApiProblem(404, 'ROUTE_NOT_FOUND', 'not a preview: /{environmentId}/{port}/… or {port}-{environmentId}.DOMAIN');
    if (!this.settings.enabled) throw disabled();
    const link = new URLSearchParams(address.rest.includes('?') ? address.rest.slice(address.rest.indexOf('?') + 1) : '').get(LINK_PARAM);
    if (link !== null) return this.exchange(req, res, address, link);
    const proto = this.base?.scheme ?? 'http';
    // With replicas that forward: a preview of another replica's environment is the owner's to pass on.
    const owner = await this.forwarder?.ownerOf(address.environmentId);
    if (owner !== undefined && this.forwarder !== undefined) {
      const opened = this.openerOf(req, address, false);
      const query = new URLSearchParams({ rest: address.rest, form: address.form, proto, ...(req.headers.host === undefined ? {} : { host: req.headers.host }) });
      const path = `${API_PREFIX}/environments/${encodeURIComponent(address.environmentId)}/previews/${address.port}/request?${query.toString()}`;
      return this.forwarder.forward(req, res, opened.caller ?? anonymous(address.environmentId), address.environmentId, owner, path);
    }
    const opened = this.openerOf(req, address, true);
    await refuseIfElsewhere(this.api, address.environmentId);
    const facts = { address, host: req.headers.host, proto, clientAddress: req.socket.remoteAddress, dropAuthorization: opened.byToken };
    await this.traffic.pass({ req, res, who: opened.caller?.name, facts });
  }

  /**
   * A preview another replica forwarded here, the owner (`…/previews/{port}/request`, signed: 404 for any
   * other call): its address and facts from the query, its opener the forwarded caller (or, for
   * {@link ANONYMOUS_OPENER}, this replica's sharing level of the port, which is kept here).
   */
  async forwardedRequest(route: RouteContext, port: number): Promise<void> {
    if (route.forwarded !== true) throw new ApiProblem(404, 'ROUTE_NOT_FOUND', 'no such route');
    const environmentId = route.params['environmentId'] ?? '';
    const form = route.query.get('form') === 'host' ? 'host' : 'path';
    const rest = route.query.get('rest') ?? '/';
    if (!rest.startsWith('/')) throw new ApiProblem(400, 'INVALID_REQUEST', 'a forwarded preview names the rest of its path');
    const address: PreviewAddress = { form, environmentId, port, rest, prefix: form === 'path' ? `/${encodeURIComponent(environmentId)}/${port}` : '' };
    const publicPort = route.caller.name === ANONYMOUS_OPENER;
    if (publicPort) this.takePublic(address);
    const proto = route.query.get('proto') === 'https' ? ('https' as const) : ('http' as const);
    const facts = { address, host: route.query.get('host') ?? undefined, proto, clientAddress: undefined, dropAuthorization: true };
    await this.traffic.pass({ req: route.req, res: route.res, who: publicPort ? undefined : route.caller.name, facts });
  }

  /** With replicas that forward: previews of another replica's environments go to it (`./forwarding`). */
  forwardWith(forwarder: Forwarder): void {
    this.forwarder = forwarder;
  }

  private addressOf(req: IncomingMessage, target: string): PreviewAddress | 'slash' | undefined {
    if (this.domain !== undefined) {
      const byHost = hostFormAddress(req.headers.host, this.domain, target);
      if (byHost !== undefined) return byHost;
    }
    return pathFormAddress(target);
  }

  /** Who opens this request: a session cookie's maker, an operator token's name, or no one for a public port. Throws 401/403/429. */
  /**
   * Who opens this request: a session cookie's maker (as a caller limited to the environment), an operator
   * token's caller, or no one (`caller` undefined) for a public port; `local` false (the owner is another
   * replica, which keeps the sharing levels): no one, for the owner to decide. Throws 401/403/429.
   */
  private openerOf(req: IncomingMessage, address: PreviewAddress, local: boolean): { caller: OperatorCaller | undefined; byToken: boolean } {
    const cookie = cookieValue(req.headers.cookie, sessionCookieName(address));
    const session = cookie === undefined ? undefined : this.check(cookie, 'session', address);
    if (session !== undefined && typeof session !== 'string') {
      return { caller: { name: session.maker, role: 'operate', environments: new Set([session.environmentId]) }, byToken: false };
    }
    const caller = this.deps.tokens.authenticate(req.headers.authorization);
    if (caller !== undefined) {
      checkOperate(caller, address.environmentId);
      return { caller, byToken: true };
    }
    if (local) this.takePublic(address, session);
    return { caller: undefined, byToken: false };
  }

  /** Lets a request without credentials through a public port within its rate; throws 429 past it, 401 for a private port. */
  private takePublic(address: PreviewAddress, session?: GrantRefusal): void {
    const limiter = this.sharing.get(sharingKey(address.environmentId, address.port));
    // A session cookie that opens nothing any more: say why, so that its holder asks for a new link.
    if (limiter === undefined && session !== undefined) {
      throw new ApiProblem(401, 'PREVIEW_LINK_INVALID', `the preview session is ${refusalWords(session)}: open a new link`);
    }
    if (limiter === undefined) {
      const links = `POST ${API_PREFIX}/environments/${address.environmentId}/previews/${address.port}/links`;
      const detail = `port ${address.port} of environment ${address.environmentId} is private: open it with a link (${links}) or an operator token with operate`;
      throw new ApiProblem(401, 'UNAUTHORIZED', detail);
    }
    const retryAfter = { 'retry-after': String(limiter.retryAfterSeconds()) };
    if (!limiter.tryTake()) throw new ApiProblem(429, 'TOO_MANY_REQUESTS', `public port ${address.port} of environment ${address.environmentId} is rate-limited`, retryAfter);
  }

  /** A link's first use: its grant for a session cookie, then a redirect to the same url without it (the link never stays in the address bar or a Referer). */
  private exchange(req: IncomingMessage, res: ServerResponse, address: PreviewAddress, link: string): void {
    const grant = this.check(link, 'link', address);
    if (typeof grant === 'string') throw new ApiProblem(401, 'PREVIEW_LINK_INVALID', `the preview link is ${refusalWords(grant)}`, { 'referrer-policy': 'no-referrer' });
    const now = this.deps.scheduler.now();
    const session = this.grants.sign({ ...grant, kind: 'session' });
    const maxAge = Math.max(1, Math.floor((grant.expiresAt - now) / 1000));
    const cookie = `${sessionCookieName(address)}=${session}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax; Secure`;
    const queryAt = address.rest.indexOf('?');
    const query = new URLSearchParams(address.rest.slice(queryAt + 1));
    query.delete(LINK_PARAM);
    const left = query.toString();
    const location = `${address.prefix}${address.rest.slice(0, queryAt)}${left === '' ? '' : `?${left}`}`;
    res.writeHead(303, { location, 'set-cookie': cookie, 'referrer-policy': 'no-referrer', 'cache-control': 'no-store', 'content-security-policy': PREVIEW_CSP }).end();
    this.deps.observer?.ended('preview', 303, 'answered');
    void req.resume();
  }

  private check(text: string, kind: 'link' | 'session', address: PreviewAddress): PreviewGrant | GrantRefusal {
    const valid = (grant: PreviewGrant): boolean => {
      const caller = this.deps.tokens.callers.find((one) => one.name === grant.maker);
      if (caller === undefined || caller.role !== 'operate' || !mayTouch(caller, grant.environmentId)) return false;
      return this.deps.tokens.tokenSeal(caller, this.grants.sealKey(grant)) === grant.seal;
    };
    return this.grants.check(text, kind, address, this.deps.scheduler.now(), valid);
  }

  /** A signed link to `port` of `environmentId` for `caller`: 409 `HTTP_DISABLED` without a preview listener, 401 when the caller's token is gone. */
  link(caller: OperatorCaller, environmentId: string, port: number): PreviewLink {
    const expiresAt = this.deps.scheduler.now() + this.settings.linkTtlMs;
    const scope = { environmentId, port, expiresAt, maker: caller.name };
    const seal = this.deps.tokens.tokenSeal(caller, this.grants.sealKey(scope));
    if (seal === undefined) throw new ApiProblem(401, 'UNAUTHORIZED', 'the token that asked is no longer accepted');
    const grant = this.grants.sign({ kind: 'link', ...scope, seal });
    const base = this.base;
    if (base === undefined) throw new ApiProblem(403, 'HTTP_DISABLED', 'the host has no preview listener: start it with --preview-port');
    const param = `?${LINK_PARAM}=${encodeURIComponent(grant)}`;
    const name = this.domain === undefined ? undefined : hostFormName(environmentId, port, this.domain);
    return {
      environmentId,
      port,
      pathUrl: `${base.scheme}://${base.hostPort}/${encodeURIComponent(environmentId)}/${port}/${param}`,
      hostUrl: name === undefined ? null : `${base.scheme}://${name}:${base.port}/${param}`,
      expiresAt: new Date(expiresAt).toISOString(),
    };
  }

  /** Sets `port`'s sharing level (the owner's memory: a restart or a move makes it private again). */
  share(environmentId: string, port: number, sharing: PreviewSharing): void {
    const key = sharingKey(environmentId, port);
    if (sharing === 'private') this.sharing.delete(key);
    else if (!this.sharing.has(key)) this.sharing.set(key, new RateLimiter(this.settings.publicRate, Math.max(1, this.settings.publicRate * 2), this.deps.scheduler));
  }

  /** The ports of `environmentId` an operator made public. */
  sharedPorts(environmentId: string): PreviewList['previews'] {
    const prefix = `${environmentId}\n`;
    return [...this.sharing.keys()].filter((key) => key.startsWith(prefix)).map((key) => ({ port: Number(key.slice(prefix.length)), sharing: 'public' as const }));
  }
}

/** The forwarded identity of a preview request without credentials: the owner checks the port's sharing level. */
export const ANONYMOUS_OPENER = 'anonymous-preview';

const anonymous = (environmentId: string): OperatorCaller => ({ name: ANONYMOUS_OPENER, role: 'view', environments: new Set([environmentId]) });

const sharingKey = (environmentId: string, port: number): string => `${environmentId}\n${port}`;

function checkOperate(caller: OperatorCaller, environmentId: string): void {
  if (!mayTouch(caller, environmentId)) throw new ApiProblem(403, 'FORBIDDEN_ENVIRONMENT', `token ${caller.name} may not touch environment ${environmentId}`);
  if (caller.role !== 'operate') throw new ApiProblem(403, 'FORBIDDEN_ROLE', `token ${caller.name} has the view role: previews need operate`);
}

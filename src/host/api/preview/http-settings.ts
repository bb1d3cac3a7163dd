/**
 * The options of HTTP through the environment on a host (`--allow-http` and the flags beside it): what a
 * preview and the fetch route may reach, and their bounds. Off unless `enabled`.
 */
import { ApiProblem } from '../problem';

/** The largest request body one `http/request` can carry: 16 MiB on the wire is about 11.9 MiB of body in base64 (docs/protocol.md#http-requests); we stop at 11 MiB. */
export const MAX_HTTP_BODY_BYTES = 11 * 1024 * 1024;

/** The longest wait for a port a request may ask for. */
export const MAX_PORT_WAIT_MS = 30_000;

/** Options of HTTP through the environment (`OperatorApiOptions.http`). */
export interface HttpOptions {
  /** Previews and the fetch route are served (`--allow-http`). @default false: both answer 403 `HTTP_DISABLED` */
  readonly enabled?: boolean;
  /**
   * What a request may reach besides 127.0.0.1 and ::1 of the executor (`--http-allow`): IP literals, CIDR
   * ranges, exact host names (resolved by the executor's resolver). @default none
   */
  readonly allow?: readonly string[];
  /**
   * The host-name form's domain (`--preview-domain`): `{port}-{environmentId}.DOMAIN` reaches the preview
   * listener. Never the host's own name or a parent of it. @default none: the path form only
   */
  readonly previewDomain?: string;
  /** The largest request body a preview or fetch passes on; past it, 413. @default 10 MiB, at most 11 MiB (what one executor message carries) */
  readonly maxBodyBytes?: number;
  /**
   * The bound on one exchange, head and body (the executor's `timeoutMs`, which bounds both: a target that
   * never answers gets 504 after it, a body still flowing then is cut). @default 60000
   */
  readonly timeoutMs?: number;
  /**
   * The bound for a request that accepts `text/event-stream` (an EventSource): its body may flow this long
   * (then the browser reconnects); its head is still awaited at most `timeoutMs` (504). @default 600000
   */
  readonly streamTimeoutMs?: number;
  /** How long a preview link, and the cookie it is exchanged for, is good for. @default 3600000 (1 h); at most a day */
  readonly linkTtlMs?: number;
  /** Response bodies streaming at once per environment; past it, 503 `PREVIEW_BUSY`. @default 16 */
  readonly streamsPerEnvironment?: number;
  /** How far a browser may fall behind a response body before the host cuts it (the executor cannot be paused for one request). @default 8 MiB */
  readonly bufferBytes?: number;
  /**
   * Requests of one environment waiting for their head at once (each holds a slot of the executor's
   * request line until then); the rest wait their turn, fairly. @default 2
   */
  readonly requestsInFlight?: number;
  /** Requests per second to one public port (a sharing level an operator turns on), a burst of twice that. @default 10 */
  readonly publicRate?: number;
}

/** {@link HttpOptions} with every default applied. */
export type HttpSettings = Required<Omit<HttpOptions, 'previewDomain'>> & { readonly previewDomain: string | undefined };

/** The options with their defaults; throws a RangeError naming the first one out of range. */
export function httpSettings(options: HttpOptions | undefined): HttpSettings {
  const settings: HttpSettings = {
    enabled: options?.enabled ?? false,
    allow: options?.allow ?? [],
    previewDomain: options?.previewDomain,
    maxBodyBytes: options?.maxBodyBytes ?? 10 * 1024 * 1024,
    timeoutMs: options?.timeoutMs ?? 60_000,
    streamTimeoutMs: options?.streamTimeoutMs ?? 600_000,
    linkTtlMs: options?.linkTtlMs ?? 3_600_000,
    streamsPerEnvironment: options?.streamsPerEnvironment ?? 16,
    bufferBytes: options?.bufferBytes ?? 8 * 1024 * 1024,
    requestsInFlight: options?.requestsInFlight ?? 2,
    publicRate: options?.publicRate ?? 10,
  };
  const whole = (name: string, value: number, max = Number.MAX_SAFE_INTEGER): void => {
    if (!(Number.isSafeInteger(value) && value >= 1 && value <= max)) throw new RangeError(`http option ${name} must be a whole number from 1 to ${max} (got ${value})`);
  };
  whole('maxBodyBytes', settings.maxBodyBytes, MAX_HTTP_BODY_BYTES);
  whole('timeoutMs', settings.timeoutMs);
  whole('streamTimeoutMs', settings.streamTimeoutMs);
  whole('linkTtlMs', settings.linkTtlMs, 86_400_000);
  whole('streamsPerEnvironment', settings.streamsPerEnvironment);
  whole('bufferBytes', settings.bufferBytes);
  whole('requestsInFlight', settings.requestsInFlight);
  if (!(Number.isFinite(settings.publicRate) && settings.publicRate > 0)) throw new RangeError(`http option publicRate must be a number > 0 (got ${settings.publicRate})`);
  return settings;
}

/** 403 `HTTP_DISABLED`: the host runs without `--allow-http`. */
export const disabled = (): ApiProblem => new ApiProblem(403, 'HTTP_DISABLED', 'HTTP through environments is off on this host: start it with --allow-http');


/**
 * The flags of `exec-rx host` for HTTP through the environments: `--allow-http`, `--http-allow`,
 * `--preview-port`, `--preview-domain`, `--max-preview-body`, `--preview-timeout`.
 */
import type { OperatorApiOptions } from '../host/api/operator-api';
import type { OperatorTokens } from '../host/api/operator-tokens';
import type { HttpOptions } from '../host/api/preview/http-settings';
import type { FilesFlags } from './host-files-flags';
import { parseSize } from './host-storage-args';
import { UsageError } from './usage-error';

/** The flags, for `util.parseArgs`. */
export const HTTP_OPTIONS = {
  'allow-http': { type: 'boolean' },
  'http-allow': { type: 'string', multiple: true },
  'preview-port': { type: 'string' },
  'preview-domain': { type: 'string' },
  'max-preview-body': { type: 'string' },
  'preview-timeout': { type: 'string' },
} as const;

/** Their lines of `exec-rx host`'s usage. */
export const HOST_HTTP_USAGE = `      --allow-http             serve HTTP through the environments: previews of what they serve and the
                               fetch route (POST /api/v1/environments/ID/fetch); off without it
      --http-allow TARGET      what a preview or fetch may reach besides 127.0.0.1 and ::1 of the executor:
                               an IP address, a CIDR range or an exact host name (resolved by the
                               executor's resolver); repeatable or a comma list. Link-local and cloud
                               metadata addresses only when named exactly
      --preview-port N         serve previews on this port of the same address (0: a free port; printed
                               at start): /ENVIRONMENT/PORT/... (an origin apart from the operator API's)
      --preview-domain DOMAIN  also serve PORT-ENVIRONMENT.DOMAIN there (a wildcard DNS name pointing at
                               the preview port); never the host's own name or a parent of it
      --max-preview-body SIZE  the largest request body a preview or fetch passes on (default 10MiB, at
                               most 11MiB: one executor message carries it); past it, 413
      --preview-timeout SECONDS  the bound on one exchange, answer and body (default 60): a target that
                               sends nothing gets 504, a body still flowing is cut (an event stream's
                               body may flow 10 minutes)`;

/** What the flags say (`undefined` / empty when not given: the operator API's default). */
export interface HttpFlags {
  readonly allowHttp: boolean;
  readonly httpAllow: readonly string[];
  readonly previewPort: number | undefined;
  readonly previewDomain: string | undefined;
  readonly maxPreviewBody: number | undefined;
  readonly previewTimeoutMs: number | undefined;
}

/** Checks the flags (a UsageError for a bad one). */
export function httpFlagsOf(values: {
  readonly 'allow-http'?: boolean;
  readonly 'http-allow'?: readonly string[];
  readonly 'preview-port'?: string;
  readonly 'preview-domain'?: string;
  readonly 'max-preview-body'?: string;
  readonly 'preview-timeout'?: string;
}): HttpFlags {
  const port = values['preview-port'];
  if (port !== undefined && !(/^[0-9]{1,5}$/.test(port) && Number(port) <= 65_535)) throw new UsageError('--preview-port expects a port from 0 to 65535');
  const timeout = values['preview-timeout'];
  if (timeout !== undefined && !/^[1-9][0-9]{0,4}$/.test(timeout)) throw new UsageError('--preview-timeout expects whole seconds from 1 to 99999');
  const domain = values['preview-domain'];
  if (domain !== undefined && port === undefined) throw new UsageError('--preview-domain goes with --preview-port (the host-name form is served there)');
  const body = parseSize('--max-preview-body', values['max-preview-body'], 1);
  if (body !== undefined && body > 11 * 1024 * 1024) throw new UsageError('--max-preview-body is at most 11MiB (one executor message carries the body whole)');
  return {
    allowHttp: values['allow-http'] === true,
    httpAllow: (values['http-allow'] ?? []).flatMap((entry) => entry.split(',')).map((entry) => entry.trim()).filter((entry) => entry !== ''),
    previewPort: port === undefined ? undefined : Number(port),
    previewDomain: domain,
    maxPreviewBody: body,
    previewTimeoutMs: timeout === undefined ? undefined : Number(timeout) * 1000,
  };
}

/** The operator API's `http` option the flags say. */
export function httpOptionsOf(flags: HttpFlags): HttpOptions {
  return {
    enabled: flags.allowHttp,
    allow: flags.httpAllow,
    ...(flags.previewDomain === undefined ? {} : { previewDomain: flags.previewDomain }),
    ...(flags.maxPreviewBody === undefined ? {} : { maxBodyBytes: flags.maxPreviewBody }),
    ...(flags.previewTimeoutMs === undefined ? {} : { timeoutMs: flags.previewTimeoutMs }),
  };
}

/** The operator API's options the flags of `exec-rx host` say: the files', the rate, the CORS origins and HTTP's. */
export function operatorOptionsOf(flags: FilesFlags & HttpFlags & { readonly corsOrigins: readonly string[] }, tokens: OperatorTokens): OperatorApiOptions {
  const files = {
    ...(flags.maxUploadBytes === undefined ? {} : { maxUploadBytes: flags.maxUploadBytes }),
    ...(flags.filesRoots.length === 0 ? {} : { roots: flags.filesRoots }),
    ...(flags.fileRequests === undefined ? {} : { requestsInFlight: flags.fileRequests }),
  };
  const rate = flags.apiRate === undefined ? {} : { requestsPerSecond: flags.apiRate, requestBurst: 2 * flags.apiRate };
  return { tokens, files, http: httpOptionsOf(flags), ...rate, ...(flags.corsOrigins.length === 0 ? {} : { corsOrigins: flags.corsOrigins }) };
}

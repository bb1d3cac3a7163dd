/**
 * `exec-rx/host`: the host side of codex's direct remote transport, for code that embeds the server
 * `exec-rx host` runs. Executors register with a SigV4 signature and dial back over WebSocket; each one
 * becomes an {@link exec-rx!Environment | Environment} of the main entry.
 *
 * Kept out of the main entry on purpose: it carries server code and `aws4`, which a client never needs.
 * Only what is exported here is public; the rest of `src/host/` may change.
 *
 * @packageDocumentation
 * @module exec-rx/host
 */

/* The server */
export { startHostServer } from './host-server';
export type { HostCloseOptions, HostOutputLogOptions, HostServer, HostServerOptions, HostStopStep } from './host-options';
export { DIRECT_TRANSPORT } from './host-options';

/* Where it logs (`log`, `audit`): a logger of its own, or a line function */
export type { HostLogger, HostLogOption, LogFields, LogFieldValue } from './host-logger';

/* What it serves: one entry per environment id, current generation */
export type { HostedEnvironment, HostedState, HostEvent } from './hosted-environments';

/* What an operator watches: the facts of the moment and the events as they happen */
export { HostMonitor } from './host-monitor';
export type { HostFacts } from './host-monitor';

/* Its output logs on disk (`outputLog`): what a failing one raises */
export { OutputLogError, OutputLogReadError } from '../errors';
export type { LogWriteOperation } from '../errors';

/* Its durable state in the data dir (`state`): the port, each environment's session; the dir's lock */
export { HostState } from './state/host-state';
export type { EnvironmentSession, HostStateOptions, PersistedEnvironment, PersistedRegistration } from './state/host-state';
export { DataDirInUseError } from '../errors';

/* The access keys it accepts */
export { loadHostCredentials } from './host-credentials';
export type { LoadedCredentials } from './host-credentials';
export type { AccessKeyStore } from './sigv4';

/* The operator API it serves when `operator` is given */
export type { OperatorApiOptions } from './api/operator-api';
export { OperatorTokens, loadOperatorTokens, OPERATOR_TOKEN_ENV, ENV_TOKEN_NAME, MADE_TOKEN_NAME } from './api/operator-tokens';
export type { GeneratedOperatorToken, LoadedOperatorTokens, OperatorCaller, OperatorRole, OperatorTokenSpec } from './api/operator-tokens';
export type { SseLimits } from './api/sse-limits';

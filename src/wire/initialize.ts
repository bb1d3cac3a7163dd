import * as t from 'io-ts';
import { EnvironmentInfo } from './environment';
import { struct } from './struct';

/** `initialize` params: `clientName` (free text, may be empty); `resumeSessionId` resumes a detached session. */
export const InitializeParams = struct('InitializeParams', { clientName: t.string }, { resumeSessionId: t.union([t.string, t.null]) });
/** `initialize` params. */
export type InitializeParams = t.TypeOf<typeof InitializeParams>;

/**
 * `initialize` result: the session id (equal to `resumeSessionId` on a resume) and, from newer
 * executors, the {@link EnvironmentInfo} (older executors and test peers omit it).
 */
export const InitializeResponse = struct('InitializeResponse', { sessionId: t.string }, { environmentInfo: EnvironmentInfo });
/** `initialize` result. */
export type InitializeResponse = t.TypeOf<typeof InitializeResponse>;

/** `initialized` notification params: `{}` (the executor ignores them). */
export const InitializedParams = struct('InitializedParams', {});
/** `initialized` notification params. */
export type InitializedParams = t.TypeOf<typeof InitializedParams>;

import * as t from 'io-ts';

/**
 * The filesystem/network sandbox context accepted by `process/start` and every `fs/*` method
 * (docs/protocol.md#process-methods), typed loosely: an arbitrary object is passed through as it is.
 * Its shape, e.g.
 * `{permissions: {type: "managed", file_system: {...}, network: "restricted"}, cwd, windowsSandboxLevel}`,
 * mixes camelCase and snake_case and is checked by the executor. `null` or absent means unsandboxed.
 */
export const SandboxContext = t.UnknownRecord;
/** A sandbox context (loose). */
export type SandboxContext = t.TypeOf<typeof SandboxContext>;

import * as t from 'io-ts';
import { withDefault } from './presence';
import { struct } from './struct';

/** A shell: `name` (`bash`, `zsh`, `sh`, `powershell`, `cmd`, ...) and its native `path` (not a URI). */
export const ShellInfo = struct('ShellInfo', { name: t.string, path: t.string });
/** A shell. */
export type ShellInfo = t.TypeOf<typeof ShellInfo>;

/**
 * Feature gates of an executor: flag name → enabled. A missing flag means `false`. Known flags include
 * `networkProxyLaunch`, `environmentConfigRead`, `fileWriteStreaming`, `shellSnapshotV2`, `fsWatchMissing`.
 */
export const Capabilities = t.record(t.string, t.boolean, 'Capabilities');
/** Feature gates of an executor. */
export type Capabilities = t.TypeOf<typeof Capabilities>;

/**
 * What an executor says about itself (docs/protocol.md#handshake): the `environment/info` result, also
 * carried by newer `initialize` results. All paths are `file://` URIs except `shell.path`. Absent fields
 * the protocol gives a reading for are filled in on decode: `executorVersion` → `"0.0.0"` (legacy
 * server), `prependPathDirs` → `[]` (omitted when empty), `capabilities` → `{}` (every flag false).
 */
export const EnvironmentInfo = struct(
  'EnvironmentInfo',
  {
    shell: ShellInfo,
    executorVersion: withDefault(t.string, () => '0.0.0'),
    cwd: t.union([t.string, t.null]),
    prependPathDirs: withDefault(t.array(t.string), () => []),
    capabilities: withDefault(Capabilities, () => ({})),
  },
  {
    providerId: t.string,
    userHomeDir: t.string,
    platformOs: t.string,
    temporaryDirectories: t.array(t.string),
    tempDir: t.string,
  },
);
/** What an executor says about itself. */
export type EnvironmentInfo = t.TypeOf<typeof EnvironmentInfo>;

/** `environment/info` result: the {@link EnvironmentInfo}. */
export const EnvironmentInfoResponse = EnvironmentInfo;
/** `environment/info` result. */
export type EnvironmentInfoResponse = EnvironmentInfo;

/** `environment/status` result: `{"status":"ready"}`, the only value the executor emits. */
export const EnvironmentStatusResponse = struct('EnvironmentStatusResponse', { status: t.keyof({ ready: null }) });
/** `environment/status` result. */
export type EnvironmentStatusResponse = t.TypeOf<typeof EnvironmentStatusResponse>;

/**
 * `environmentConfig/read` params: each path is a list of TOML key segments; at least one path overall
 * is required (the executor checks).
 */
export const EnvironmentConfigReadParams = struct('EnvironmentConfigReadParams', {
  cwd: t.string,
  configPaths: t.array(t.array(t.string)),
  requirementsPaths: t.array(t.array(t.string)),
});
/** `environmentConfig/read` params. */
export type EnvironmentConfigReadParams = t.TypeOf<typeof EnvironmentConfigReadParams>;

/**
 * `environmentConfig/read` result, typed loosely: an arbitrary object; the known fields are checked when present
 * and `config`/`requirements` (`{layers, cloudInsertionIndex}`) are left as they come.
 */
export const EnvironmentConfigReadResponse = t.intersection(
  [
    t.UnknownRecord,
    t.partial({
      userHomeDir: t.union([t.string, t.null]),
      codexHomeDir: t.union([t.string, t.null]),
      hostname: t.union([t.string, t.null]),
      config: t.unknown,
      requirements: t.unknown,
    }),
  ],
  'EnvironmentConfigReadResponse',
);
/** `environmentConfig/read` result. */
export type EnvironmentConfigReadResponse = t.TypeOf<typeof EnvironmentConfigReadResponse>;

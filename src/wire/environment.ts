import * as t from 'io-ts';
import { withDefault } from './presence';
import { struct } from './struct';

// The codecs exported from the package's main entry as types carry `@hidden` (TypeDoc shows the type,
// not the codec) and their types `@interface`/`@useDeclaredType` (TypeDoc shows the resolved shape).

/**
 * A shell: `name` (`bash`, `zsh`, `sh`, `powershell`, `cmd`, ...) and its native `path` (not a URI).
 * @hidden
 */
export const ShellInfo = struct('ShellInfo', {
  /** The shell's name: `bash`, `zsh`, `sh`, `powershell`, `cmd`, ... */
  name: t.string,
  /** The shell's native path (not a URI), e.g. `/bin/bash`. */
  path: t.string,
});
/**
 * A shell on the executor.
 * @interface
 */
export type ShellInfo = t.TypeOf<typeof ShellInfo>;

/**
 * Feature gates of an executor: flag name → enabled. A missing flag means `false`. Known flags include
 * `networkProxyLaunch`, `environmentConfigRead`, `fileWriteStreaming`, `shellSnapshotV2`, `fsWatchMissing`.
 * @hidden
 */
export const Capabilities = t.record(t.string, t.boolean, 'Capabilities');
/**
 * Feature gates of an executor: flag name → enabled; a missing flag means `false`. Known flags include
 * `networkProxyLaunch` (`process/start` accepts `networkProxy`), `environmentConfigRead`,
 * `httpHeaderEnvVars` (`valueEnvVar` in HTTP headers), `fileWriteStreaming` (`fs/open` mode `replace`),
 * `shellSnapshotV2` (`shellSnapshot` in `process/start`) and `fsWatchMissing`.
 * @useDeclaredType
 */
export type Capabilities = t.TypeOf<typeof Capabilities>;

/**
 * What an executor says about itself (docs/protocol.md#handshake): the `environment/info` result, also
 * carried by newer `initialize` results. All paths are `file://` URIs except `shell.path`. Absent fields
 * the protocol gives a reading for are filled in on decode: `executorVersion` → `"0.0.0"` (legacy
 * server), `prependPathDirs` → `[]` (omitted when empty), `capabilities` → `{}` (every flag false).
 * @hidden
 */
export const EnvironmentInfo = struct(
  'EnvironmentInfo',
  {
    /** The executor's detected default user shell. */
    shell: ShellInfo,
    /** The executor's release, e.g. `"0.171.0"`; `"0.0.0"` when a legacy executor does not say. */
    executorVersion: withDefault(t.string, () => '0.0.0'),
    /** The working directory of the executor process, as a `file://` URI; `null` when it has none. */
    cwd: t.union([t.string, t.null]),
    /** Directories (`file://` URIs) to prepend to `PATH` when missing from it; `[]` when none. */
    prependPathDirs: withDefault(t.array(t.string), () => []),
    /** The executor's feature gates; `{}` (every flag false) when it sends none. */
    capabilities: withDefault(Capabilities, () => ({})),
  },
  {
    /** An opaque identity of the executor's build (`sha256:…`); absent when unknown. */
    providerId: t.string,
    /** The home directory the executor expands `~` with, as a `file://` URI. */
    userHomeDir: t.string,
    /** The executor's operating system: `linux`, `macos`, `windows`, … */
    platformOs: t.string,
    /** Temporary directories from `TMPDIR` (Unix) or `TEMP`/`TMP` (Windows), as URIs; `[]` when unset. */
    temporaryDirectories: t.array(t.string),
    /** The executor's native temporary directory, as a `file://` URI. */
    tempDir: t.string,
  },
);
/**
 * What an executor says about itself (`Environment.info()`): its shell, version, directories and
 * feature gates. All paths are `file://` URIs except `shell.path`.
 * @interface
 */
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

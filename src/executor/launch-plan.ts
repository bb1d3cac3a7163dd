import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SpawnExecutorOptions } from './spawn-options';

/** The parent's environment minus anything that could carry credentials or change logging. */
export function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || /^(AWS_|CODEX_)/i.test(name) || name === 'RUST_LOG') continue;
    env[name] = value;
  }
  return env;
}

/** Mode-specific arguments, environment and stdin of one executor launch. */
export interface LaunchPlan {
  /** `exec-server` and the mode's own arguments (before any `extraArgs`). */
  readonly args: string[];
  /** Mode-specific variables (direct mode: the `AWS_*` credentials), applied over the caller's `env`. */
  readonly env: Record<string, string>;
  /** Whether the child gets a stdin pipe (stdio and direct modes) or none. */
  readonly stdin: 'pipe' | 'ignore';
}

/**
 * The launch plan of one mode. Listen mode with a `wsAuthToken` writes the token to a 0600 file in
 * `tempDir` (never on the command line); direct mode passes the credentials as environment variables.
 */
export async function launchPlan(options: SpawnExecutorOptions, tempDir: string): Promise<LaunchPlan> {
  switch (options.mode) {
    case 'listen': {
      const args = ['exec-server', '--listen', 'ws://127.0.0.1:0'];
      if (options.wsAuthToken !== undefined) {
        const tokenFile = join(tempDir, 'ws-token');
        await writeFile(tokenFile, options.wsAuthToken, { mode: 0o600, flag: 'wx' });
        args.push('--ws-auth', 'capability-token', '--ws-token-file', tokenFile);
      }
      return { args, env: {}, stdin: 'ignore' };
    }
    case 'stdio':
      return { args: ['exec-server', '--listen', 'stdio'], env: {}, stdin: 'pipe' };
    case 'direct': {
      const region = options.region ?? 'us-east-1';
      const { accessKeyId, secretAccessKey, sessionToken } = options.credentials;
      const env: Record<string, string> = { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_REGION: region };
      if (sessionToken !== undefined) env['AWS_SESSION_TOKEN'] = sessionToken;
      const args = ['exec-server', '--remote', options.remoteUrl, '--remote-transport', 'direct', '--aws-sigv4'];
      args.push('--aws-region', region, '--environment-id', options.environmentId);
      if (options.exitOnStdinClose === false) return { args, env, stdin: 'ignore' };
      // --exit-on-stdin-close: if this process dies, the pipe closes and the executor exits with its processes.
      args.push('--exit-on-stdin-close');
      return { args, env, stdin: 'pipe' };
    }
  }
}

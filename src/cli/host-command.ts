/**
 * `exec-rx host`: runs the direct-transport host until SIGINT or SIGTERM, printing the command an
 * executor runs to join (with placeholders where the credentials go) and one line per event on stderr.
 */
import { readFileSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { loadHostCredentials } from '../host/host-credentials';
import type { HostServerOptions } from '../host/host-server';
import { startHostServer } from '../host/host-server';
import type { HostCliOptions } from './args';

/** Where `exec-rx host` writes, and the environment it reads credentials from. */
export interface HostIo {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly env: NodeJS.ProcessEnv;
}

function readTls(options: HostCliOptions): HostServerOptions['tls'] {
  if (options.tlsCert === undefined || options.tlsKey === undefined) return undefined;
  const read = (path: string): Buffer => {
    try {
      return readFileSync(path);
    } catch {
      throw new Error(`cannot read ${path}`);
    }
  };
  return { cert: read(options.tlsCert), key: read(options.tlsKey) };
}

function serverOptions(options: HostCliOptions, io: HostIo, log: (line: string) => void): HostServerOptions {
  const credentials = loadHostCredentials(options.credentialsFile, io.env);
  if (credentials.warning !== undefined) log(`warning: ${credentials.warning}`);
  log(`accepting ${credentials.keys.size} access key(s) from ${credentials.source}`);
  const tls = readTls(options);
  const optional = {
    tls,
    publicUrl: options.publicUrl,
    region: options.region,
    maxEnvironments: options.maxEnvironments,
    maxFrameBytes: options.maxFrameBytes,
    maxHandshakesPerSecond: options.maxHandshakesPerSecond,
  };
  const defined = Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined));
  return { credentials: credentials.keys, host: options.host, port: options.port, log, ...defined };
}

/** Resolves with the next SIGINT/SIGTERM (listeners removed after). */
function nextStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', stop).off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop).on('SIGTERM', stop);
  });
}

/**
 * Serves until SIGINT/SIGTERM, then closes the host (executors keep their processes for their
 * retention time and re-dial). Resolves with the exit status; a bad configuration is one stderr line and 1.
 */
export async function hostCommand(options: HostCliOptions, io: HostIo): Promise<number> {
  const log = (line: string): void => void io.stderr.write(`exec-rx host: ${line}\n`);
  let host;
  try {
    host = await startHostServer(serverOptions(options, io, log));
  } catch (error: unknown) {
    log(error instanceof Error ? error.message : String(error));
    return 1;
  }
  io.stdout.write(`exec-rx host listening on ${host.url}\nAn executor joins with:\n  ${host.joinCommand()}\n`);
  const signal = await nextStopSignal();
  log(`${signal}: closing`);
  await host.close();
  return 0;
}

/** `exec-rx host --tls-cert FILE --tls-key FILE`: the certificate and key the host serves TLS with, read. */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../errors';
import type { HostServerOptions } from '../host/host-options';
import type { HostCliOptions } from './args';

/** The TLS files of `options` read (undefined without them). Throws a ConfigError naming a file that cannot be read. */
export function readTls(options: Pick<HostCliOptions, 'tlsCert' | 'tlsKey'>): HostServerOptions['tls'] {
  if (options.tlsCert === undefined || options.tlsKey === undefined) return undefined;
  const read = (path: string): Buffer => {
    try {
      return readFileSync(path);
    } catch (error: unknown) {
      throw new ConfigError(`cannot read ${path}`, { cause: error });
    }
  };
  return { cert: read(options.tlsCert), key: read(options.tlsKey) };
}

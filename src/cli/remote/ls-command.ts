/** `exec-rx ls`: a running host's environments and their processes, as a table or (`--json`) one document. */
import { firstValueFrom } from 'rxjs';
import { HostClient } from '../../client/host-client';
import type { LsOptions } from '../host-args';
import { EXIT_ERROR } from '../exit-codes';
import type { CliIo } from '../io';
import { describeHostError } from './host-errors';
import { lsJson, lsTable } from './ls-format';

/** How long the host may stay unreachable before `ls` gives up. */
const LS_OFFLINE_MS = 2_000;

/**
 * Prints the host's environments and processes (one snapshot of its overview) and resolves 0; when the
 * host refuses or cannot be reached, one `exec-rx: …` line on stderr and 1. Never rejects.
 */
export async function lsCommand(options: LsOptions, io: CliIo): Promise<number> {
  const { url, token } = options.access;
  const client = new HostClient({ url: options.access.urls ?? url, token, retry: { maxOfflineMs: LS_OFFLINE_MS } });
  try {
    const environments = await firstValueFrom(client.environments$);
    io.stdout.write(options.json ? `${JSON.stringify(lsJson(url, environments), null, 2)}\n` : lsTable(environments));
    return 0;
  } catch (error: unknown) {
    io.stderr.write(`exec-rx: ${describeHostError(error, url)}\n`);
    return EXIT_ERROR;
  }
}

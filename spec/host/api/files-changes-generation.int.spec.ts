/**
 * The change stream of a directory across a new generation (issue 41): the host's poller looks its
 * environment up by id at each poll, so after the executor restarted under the same id (a new session,
 * another Environment object) the same stream goes on reporting changes. Against a real host and real
 * codex executors.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import type { FileChange } from '../../../src/wire/files-api';
import { startDirectExecutor } from '../../support/executor';
import { EXECUTOR_CREDENTIALS, startApiHost } from './api-host';
import { filesUrl } from './files-support';

jest.setTimeout(90_000);

const ENV = 'files-changes-generation';

describe('the change stream of a directory, across an executor restart under the same id', () => {
  let dir: string;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('goes on reporting changes from the new generation', async () => {
    dir = mkdtempSync(join(tmpdir(), 'exec-rx-files-generation-'));
    const watched = join(dir, 'watched');
    mkdirSync(watched);
    const { host, executor, api } = await startApiHost({ environmentId: ENV });
    const opened = await api.events(filesUrl(ENV, '/changes', { path: watched }));
    if (!('stream' in opened)) throw new Error(`changes answered ${opened.refused.status}: ${opened.refused.text}`);
    const named = (name: string) => (e: { event: string; data: string }): boolean => e.event === 'change' && (JSON.parse(e.data) as FileChange).entry.name === name;
    try {
      writeFileSync(join(watched, 'before.txt'), 'first generation');
      expect((JSON.parse((await opened.stream.next(named('before.txt'), 20_000)).data) as FileChange).kind).toBe('created');

      await executor.stop();
      await startDirectExecutor({ remoteUrl: host.url, environmentId: ENV, credentials: EXECUTOR_CREDENTIALS });
      await firstValueFrom(host.environments$.pipe(filter((list) => list.some((e) => e.id === ENV && e.generation === 2 && e.state === 'connected'))));

      writeFileSync(join(watched, 'after.txt'), 'second generation');
      const after = JSON.parse((await opened.stream.next(named('after.txt'), 20_000)).data) as FileChange;
      expect({ kind: after.kind, size: after.entry.size }).toEqual({ kind: 'created', size: 17 });
    } finally {
      await opened.stream.close();
    }
  });
});

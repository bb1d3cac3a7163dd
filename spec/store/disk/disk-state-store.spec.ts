/**
 * The host's durable state in its data dir: the lock (a second open is refused with the holder's pid, a
 * dead host's lock is taken over, close releases it), what it keeps round-trips through a new open, a
 * damaged file is reported and treated as absent, and no file holds anything but ids, a port and times.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VirtualTimeScheduler } from 'rxjs';
import { ConfigError, DataDirInUseError } from '../../../src/errors';
import { DiskStateStore } from '../../../src/store/disk/disk-state-store';

describe('DiskStateStore', () => {
  let dir: string;
  const opened: DiskStateStore[] = [];
  const open = async (log?: (line: string) => void): Promise<DiskStateStore> => {
    const state = await DiskStateStore.open(dir, { scheduler: new VirtualTimeScheduler(), ...(log === undefined ? {} : { log }) });
    opened.push(state);
    return state;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'exec-rx-host-state-'));
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((state) => state.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  describe('the lock', () => {
    it('refuses a second open while the first holds the data dir, naming its pid', async () => {
      await open();
      const second = DiskStateStore.open(dir);
      await expect(second).rejects.toThrow(DataDirInUseError);
      await expect(second).rejects.toThrow(ConfigError);
      await expect(second).rejects.toThrow(`the data dir is in use by host pid ${process.pid}: stop that host or choose another data dir`);
    });

    it('refuses a lock held by another live process', async () => {
      writeFileSync(join(dir, 'host.lock'), `${process.ppid} 0123456789abcdef\n`);
      await expect(DiskStateStore.open(dir)).rejects.toMatchObject({ code: 'CONFIG_INVALID', pid: process.ppid });
      // Not ours: it is left where it was.
      expect(readFileSync(join(dir, 'host.lock'), 'utf8')).toBe(`${process.ppid} 0123456789abcdef\n`);
    });

    it('takes over a lock whose pid is no longer alive', async () => {
      const dead = spawnSync(process.execPath, ['-e', '']).pid;
      writeFileSync(join(dir, 'host.lock'), `${dead} 0123456789abcdef\n`);
      await open();
      expect(readFileSync(join(dir, 'host.lock'), 'utf8')).toMatch(new RegExp(`^${process.pid} [0-9a-f]{16}\\n$`));
    });

    it('takes over a lock that names no pid (a damaged one)', async () => {
      writeFileSync(join(dir, 'host.lock'), '');
      await open();
      expect(readFileSync(join(dir, 'host.lock'), 'utf8')).toMatch(new RegExp(`^${process.pid} `));
    });

    it('releases the lock on close: the next open succeeds, and no file of the lock is left', async () => {
      const first = await open();
      await first.close();
      await first.close();
      expect(readdirSync(dir).sort()).toEqual(['environments', 'registrations', 'starts', 'stdin']);
      await open();
    });
  });

  describe('what it keeps', () => {
    it('round-trips the port and every environment through a new open', async () => {
      const first = await open();
      expect(first.port).toBeUndefined();
      expect(await first.environments()).toEqual([]);
      await first.setPort(43_210);
      await first.setSession('env/b', { sessionId: 'session-b', accessKeyId: 'AKIDB' }, 0);
      await first.setSession('env-a', { sessionId: 'session-a1', accessKeyId: 'AKIDA' }, 0);
      await first.setSession('env-a', { sessionId: 'session-a2', accessKeyId: 'AKIDA' }, 0);
      await first.setSession('gone', { sessionId: 'session-g', accessKeyId: 'AKIDA' }, 0);
      await first.forget('gone');
      await first.close();

      const second = await open();
      expect(second.port).toBe(43_210);
      expect(await second.environments()).toEqual([
        { id: 'env-a', sessionId: 'session-a2', accessKeyId: 'AKIDA', updatedAt: 0 },
        { id: 'env/b', sessionId: 'session-b', accessKeyId: 'AKIDB', updatedAt: 0 },
      ]);
      expect(await second.environment('env/b')).toEqual({ id: 'env/b', sessionId: 'session-b', accessKeyId: 'AKIDB', updatedAt: 0 });
      expect(await second.environment('gone')).toBeUndefined();
      expect(readdirSync(join(dir, 'environments')).sort()).toEqual(['env%2Fb.json', 'env-a.json']);
    });

    it('writes ids, a port and times, nothing else (no token, no secret)', async () => {
      const state = await open();
      await state.setPort(1234);
      await state.setSession('env-a', { sessionId: 'session-a', accessKeyId: 'AKIDA' }, 0);
      const read = (path: string): unknown => JSON.parse(readFileSync(join(dir, path), 'utf8'));
      expect(read('host.json')).toEqual({ version: 1, port: 1234 });
      expect(read('environments/env-a.json')).toEqual({ version: 1, id: 'env-a', sessionId: 'session-a', accessKeyId: 'AKIDA', updatedAt: 0 });
      expect(readdirSync(dir).sort()).toEqual(['environments', 'host.json', 'host.lock', 'registrations', 'starts', 'stdin']);
    });

    it("keeps an environment's owner and epoch in its file beside its session, and reads a file with only them back", async () => {
      const state = await open();
      expect(await state.claim('env-o', 'host-1')).toBe(1);
      const read = (path: string): unknown => JSON.parse(readFileSync(join(dir, path), 'utf8'));
      expect(read('environments/env-o.json')).toEqual({ version: 1, id: 'env-o', owner: 'host-1', epoch: 1 });
      await state.setSession('env-o', { sessionId: 'session-o', accessKeyId: 'AKIDO' }, 1);
      expect(read('environments/env-o.json')).toEqual({ version: 1, id: 'env-o', sessionId: 'session-o', accessKeyId: 'AKIDO', updatedAt: 0, owner: 'host-1', epoch: 1 });
      await state.claim('env-p', 'host-1');
      await state.close();
      const again = await open();
      expect({ o: await again.owner('env-o'), p: await again.owner('env-p'), sessions: (await again.environments()).map((e) => e.id) }).toEqual({
        o: { owner: 'host-1', epoch: 1 },
        p: { owner: 'host-1', epoch: 1 },
        sessions: ['env-o'],
      });
    });

    it('keeps each environment\'s latest registration with its token only as a digest, and reads it back', async () => {
      const state = await open();
      const digest = 'ab'.repeat(32);
      await state.setRegistration({ id: 'env-r', registrationId: 'reg-1', accessKeyId: 'AKIDR', tokenDigest: 'cd'.repeat(32) });
      await state.setRegistration({ id: 'env-r', registrationId: 'reg-2', accessKeyId: 'AKIDR', tokenDigest: digest });
      expect(JSON.parse(readFileSync(join(dir, 'registrations', 'env-r.json'), 'utf8'))).toEqual({ version: 1, id: 'env-r', registrationId: 'reg-2', accessKeyId: 'AKIDR', tokenDigest: digest });
      await state.close();
      const again = await open();
      expect(await again.registrations()).toEqual([{ id: 'env-r', registrationId: 'reg-2', accessKeyId: 'AKIDR', tokenDigest: digest }]);
      await again.forget('env-r');
      expect(await again.registrations()).toEqual([]);
      await again.close();
      expect(readdirSync(join(dir, 'registrations'))).toEqual([]);
    });

    it('treats a damaged file as absent and says so, without failing', async () => {
      const first = await open();
      await first.setPort(1234);
      await first.setSession('env-a', { sessionId: 'session-a', accessKeyId: 'AKIDA' }, 0);
      await first.setSession('env-b', { sessionId: 'session-b', accessKeyId: 'AKIDB' }, 0);
      await first.close();
      writeFileSync(join(dir, 'host.json'), '{"version":1,"po');
      writeFileSync(join(dir, 'environments', 'env-a.json'), '{"version":1,"id":"env-a"}');
      writeFileSync(join(dir, 'environments', 'other.json'), JSON.stringify({ version: 1, id: 'env-b', sessionId: 's', accessKeyId: 'AKIDB', updatedAt: 0 }));
      writeFileSync(join(dir, 'environments', 'env-c.json.tmp'), 'half a write');
      mkdirSync(join(dir, 'environments', 'not-a-file.txt'));
      mkdirSync(join(dir, 'environments', 'a-folder.json'));

      const lines: string[] = [];
      const second = await open((line) => lines.push(line));
      expect(second.port).toBeUndefined();
      expect(await second.environments()).toEqual([{ id: 'env-b', sessionId: 'session-b', accessKeyId: 'AKIDB', updatedAt: 0 }]);
      expect(lines.sort()).toEqual(['environments/a-folder.json cannot be read (EISDIR): ignored', 'environments/env-a.json is damaged: ignored', 'environments/other.json is damaged: ignored', 'host.json is damaged: ignored']);
      // A damaged file is replaced by the next write.
      await second.setPort(4321);
      expect(JSON.parse(readFileSync(join(dir, 'host.json'), 'utf8'))).toEqual({ version: 1, port: 4321 });
    });
  });
});

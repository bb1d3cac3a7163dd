/**
 * `exec-rx host`'s logs (src/cli/host-log.ts): JSON lines off a terminal, readable lines on one, the level
 * honoured, fields kept (undefined ones left out), and the audit trail in a file of its own, 0600, appended.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { hostLogs, prettyLine } from '../../src/cli/host-log';

/** A stderr stand-in that keeps what it is given. */
function sink(isTTY: boolean): { readonly stream: Writable & { readonly isTTY: boolean }; readonly text: () => string } {
  const chunks: string[] = [];
  const stream = Object.assign(
    new Writable({
      write: (chunk: Buffer | string, _encoding, done) => {
        chunks.push(chunk.toString());
        done();
      },
    }),
    { isTTY },
  );
  return { stream, text: () => chunks.join('') };
}

describe('exec-rx host logs', () => {
  it('writes JSON lines when stderr is not a terminal, with the level, time, msg and the defined fields', () => {
    const stderr = sink(false);
    const logs = hostLogs({ stderr: stderr.stream, format: undefined, level: 'info', auditFile: undefined });
    logs.log.info({ environmentId: 'e-1', generation: 2, processId: undefined }, 'environment e-1 generation 2: connected');
    logs.log.debug({}, 'not at info');
    logs.log.warn({ status: 401 }, 'refused');
    const lines = stderr.text().trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([
      { level: 'info', time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown, pid: process.pid, environmentId: 'e-1', generation: 2, msg: 'environment e-1 generation 2: connected' },
      { level: 'warn', time: expect.any(String) as unknown, pid: process.pid, status: 401, msg: 'refused' },
    ]);
    expect(logs.audit).toBe(logs.log);
  });

  it('writes readable lines on a terminal, and when asked', () => {
    const tty = sink(true);
    hostLogs({ stderr: tty.stream, format: undefined, level: 'debug', auditFile: undefined }).log.debug({ environmentId: 'e-1' }, 'hello');
    expect(tty.text()).toMatch(/^\d\d:\d\d:\d\d\.\d{3} DEBUG hello {2}environmentId=e-1\n$/);
    const piped = sink(false);
    hostLogs({ stderr: piped.stream, format: 'pretty', level: 'info', auditFile: undefined }).log.error({}, 'failed');
    expect(piped.text()).toMatch(/^\d\d:\d\d:\d\d\.\d{3} ERROR failed\n$/);
    expect(prettyLine('not json')).toBe('not json\n');
    expect(prettyLine('{"level":"info","time":"2026-01-01T10:00:00.000Z","pid":1,"msg":"m","argv":["a","b"]}\n')).toBe('10:00:00.000 INFO  m  argv=["a","b"]\n');
  });

  it('appends the audit trail to its own 0600 file, at info even when stderr is quieter', () => {
    const dir = mkdtempSync(join(tmpdir(), 'exec-rx-host-log-'));
    try {
      const file = join(dir, 'audit.log');
      writeFileSync(file, '{"earlier":true}\n', { mode: 0o644 });
      const stderr = sink(false);
      const logs = hostLogs({ stderr: stderr.stream, format: 'json', level: 'warn', auditFile: file });
      logs.audit.info({ audit: true, act: 'start', tokenName: 'ci' }, 'audit: start');
      logs.audit.debug({ audit: true, act: 'stdin', tokenName: 'ci' }, 'audit: stdin');
      logs.close();
      logs.audit.info({ audit: true }, 'after close: dropped');
      expect(stderr.text()).toBe('');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const lines = readFileSync(file, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines).toEqual([{ earlier: true }, expect.objectContaining({ level: 'info', audit: true, act: 'start', tokenName: 'ci', msg: 'audit: start' })]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an audit file it cannot open', () => {
    expect(() => hostLogs({ stderr: sink(false).stream, format: 'json', level: 'info', auditFile: '/nonexistent-dir/audit.log' })).toThrow('cannot open --audit-log /nonexistent-dir/audit.log');
  });
});

/** The views of ExecProcess with their options: `afterSeq` resumes, `allowTruncated` carries on past a marker. */
import type { Observable } from 'rxjs';
import { lastValueFrom } from 'rxjs';
import { toArray } from 'rxjs/operators';
import { ExecProcess } from '../../src/exec/exec-process';
import { ReplayTruncatedError } from '../../src/exec/replay-truncated-error';
import { quietSession } from '../support/quiet-session';
import type { ReadResponse } from '../../src/wire/process';

/** A finished process whose output was `lines` on stdout (seq 1..n), then exit 0 and close. */
function finished(lines: readonly string[], historyEvents = 256): ExecProcess {
  const process = new ExecProcess('p', quietSession, { historyEvents });
  const read: ReadResponse = {
    chunks: lines.map((line, i) => ({ seq: i + 1, stream: 'stdout' as const, chunk: new Uint8Array(Buffer.from(`${line}\n`)) })),
    nextSeq: lines.length + 3,
    exited: true,
    exitCode: 0,
    closed: true,
    failure: null,
    sandboxDenied: false,
  };
  process.inbox.recover(read);
  return process;
}

const all = <T>(source: Observable<T>): Promise<T[]> => lastValueFrom(source.pipe(toArray()));

describe('ExecProcess views with options', () => {
  it('text$, bytes$ and lines$ resume after a seq', async () => {
    const process = finished(['one', 'two', 'three']);
    expect((await all(process.text$('stdout', { afterSeq: 1 }))).join('')).toBe('two\nthree\n');
    expect(Buffer.concat(await all(process.bytes$('stdout', { afterSeq: 2 }))).toString()).toBe('three\n');
    expect(await all(process.lines$(undefined, { afterSeq: 0 }))).toEqual(['one', 'two', 'three']);
    expect(await all(process.lines$('stdout', { afterSeq: 5 }))).toEqual([]);
  });

  it('error with ReplayTruncatedError past the history unless allowTruncated, which carries on with what is left', async () => {
    const process = finished(['one', 'two', 'three', 'four'], 4);
    await expect(all(process.text$('stdout'))).rejects.toBeInstanceOf(ReplayTruncatedError);
    await expect(all(process.text$('stdout', { afterSeq: 1 }))).rejects.toMatchObject({ code: 'PROCESS_GAP' });
    expect((await all(process.text$('stdout', { allowTruncated: true }))).join('')).toBe('three\nfour\n');
    expect(await all(process.lines$('stdout', { afterSeq: 2 }))).toEqual(['three', 'four']);
    expect(await all(process.eventsAfter$(1))).toEqual([
      { type: 'truncated', nextSeq: 3, droppedEvents: 2, droppedBytes: 8 },
      { type: 'output', seq: 3, stream: 'stdout', chunk: new Uint8Array(Buffer.from('three\n')) },
      { type: 'output', seq: 4, stream: 'stdout', chunk: new Uint8Array(Buffer.from('four\n')) },
      { type: 'exited', seq: 5, exitCode: 0, sandboxDenied: false },
      { type: 'closed', seq: 6 },
    ]);
  });
});

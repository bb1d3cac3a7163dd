/**
 * Fault injection: an outage that outlasts the executor's output window (≈1 MiB retained per process).
 * While the host is cut off, processes write 4 MiB at once; when the connection returns, the evicted
 * output can no longer be read. The affected processes must fail with the typed gap error, never deliver
 * a stream with a silent hole, and be terminated on the executor; an unaffected process carries on.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { toArray } from 'rxjs/operators';
import type { ExecProcess, ProcessEvent } from '../../src';
import { ProcessGapError } from '../../src';
import { FAULT_SEED, PATH_ENV, currentRpc, drop, faultSetup, redial } from './fault-kit';
import { waitForFile } from '../support/wait-for-file';

const FILE_BUDGET_MS = 60_000;
jest.setTimeout(FILE_BUDGET_MS);

const BURST_BYTES = 4 * 1024 * 1024;

const seqsOf = (events: readonly ProcessEvent[]): number[] => events.flatMap((e) => ('seq' in e ? [e.seq] : []));
const textOf = (events: readonly ProcessEvent[]): string => events.map((e) => (e.type === 'output' ? Buffer.from(e.chunk).toString('utf8') : '')).join('');

describe(`fault injection: an outage longer than the output window [seed ${FAULT_SEED}]`, () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-faults-gap-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('fails a process whose output was evicted during the outage with PROCESS_GAP, terminates it, and keeps the rest', async () => {
    const setup = await faultSetup('env-faults-gap');
    const backend = setup.environment.getExecBackend();
    const gate = join(work, 'GATE');
    const gate2 = join(work, 'GATE2');
    const start = async (name: string, tail: string): Promise<{ proc: ExecProcess; events: Promise<ProcessEvent[]> }> => {
      const script = `echo ready; while [ ! -f '${gate}' ]; do sleep 0.02; done; ${tail}`;
      const { process: proc } = await backend.start({ argv: ['/bin/sh', '-c', script], cwd: work, env: PATH_ENV, processId: `gap-${name}` });
      const events = lastValueFrom(proc.events$.pipe(toArray()));
      expect(await firstValueFrom(proc.lines$('stdout'))).toBe('ready');
      return { proc, events };
    };
    // exits after its burst; keeps running after its burst; writes nothing during the outage.
    const exited = await start('exited', `head -c ${BURST_BYTES} /dev/urandom; touch '${join(work, 'DONE-exited')}'`);
    const running = await start('running', `head -c ${BURST_BYTES} /dev/urandom; touch '${join(work, 'DONE-running')}'; while [ ! -f '${gate2}' ]; do sleep 0.02; done; echo survived`);
    const bystander = await start('bystander', `while [ ! -f '${gate2}' ]; do sleep 0.02; done; echo bye`);
    const publishedBeforeDrop = { exited: exited.proc.lastPublishedSeq, running: running.proc.lastPublishedSeq };

    await drop(setup);
    writeFileSync(gate, '');
    // The executor finished writing both bursts (and the first process exited) while we were away.
    await Promise.all([waitForFile(join(work, 'DONE-exited')), waitForFile(join(work, 'DONE-running'))]);
    await redial(setup);

    for (const [name, { proc, events }] of Object.entries({ exited, running })) {
      const all = await events;
      const before = name === 'exited' ? publishedBeforeDrop.exited : publishedBeforeDrop.running;
      // Exactly what was delivered before the drop, then the typed failure: no silent hole, no closed.
      expect(seqsOf(all)).toEqual(Array.from({ length: before }, (_, i) => i + 1));
      expect(textOf(all)).toBe('ready\n');
      const last = all.at(-1);
      expect(last?.type).toBe('failed');
      const error = last?.type === 'failed' ? last.error : undefined;
      expect(error).toBeInstanceOf(ProcessGapError);
      expect(error).toMatchObject({ code: 'PROCESS_GAP', processId: proc.processId, missingFromSeq: before + 1 });
      expect(error instanceof ProcessGapError ? error.missingToSeq : 0).toBeGreaterThan(before + 1);
      expect(error?.message).toContain('process events are no longer retained while recovering through sequence');
      expect(proc.state).toBe('failed');
      await expect(firstValueFrom(proc.bytes$('stdout').pipe(toArray()))).rejects.toBeInstanceOf(ProcessGapError);
    }

    // The host terminated the process it can no longer follow (best effort, but it must happen here). It
    // writes nothing after its burst, so the only events after the gap's target seq are exited and closed:
    // a read after that seq returns as soon as the process exited.
    const rpc = currentRpc(setup.environment);
    const runningFailure = (await running.events).at(-1);
    const afterSeq = runningFailure?.type === 'failed' && runningFailure.error instanceof ProcessGapError ? runningFailure.error.missingToSeq : 0;
    let read = await rpc.call('process/read', { processId: running.proc.processId, afterSeq, maxBytes: null, waitMs: 2_000 });
    for (let polls = 0; !read.exited && polls < 5; polls += 1) {
      read = await rpc.call('process/read', { processId: running.proc.processId, afterSeq, maxBytes: null, waitMs: 2_000 });
    }
    expect({ exited: read.exited, exitCode: read.exitCode, chunks: read.chunks.length }).toEqual({ exited: true, exitCode: 137, chunks: 0 });

    // The process that wrote nothing during the outage is unaffected.
    writeFileSync(gate2, '');
    const bystanderEvents = await bystander.events;
    expect(textOf(bystanderEvents)).toBe('ready\nbye\n');
    expect(seqsOf(bystanderEvents)).toEqual(seqsOf(bystanderEvents).map((_, i) => i + 1));
    expect(bystanderEvents.at(-1)?.type).toBe('closed');
    expect({ routes: rpc.processRouteCount, pending: rpc.pendingCount, processes: setup.environment.client.processCount }).toEqual({ routes: 0, pending: 0, processes: 0 });
  });
});

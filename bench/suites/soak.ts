/**
 * 7. Soak (`--only=soak`, about 3 minutes): 20 processes at a time, each streaming about 64 KiB/s of
 * random bytes through a direct executor that dials the bench through a disconnectable TCP proxy; the
 * socket is dropped every 10 s and the executor's re-dial adopted; every process is released once it
 * closed and replaced by a new one. Checks that nothing leaks (heap, RSS, active handles, pending calls,
 * routes) and that every process's output hashes to what the executor says it wrote.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { firstValueFrom } from 'rxjs';
import { filter, timeout } from 'rxjs/operators';
import type { ConnectionState, Environment } from '../../src';
import { EnvironmentManager } from '../../src';
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import { DirectHost, stopExecutor, trackCloser } from '../lib/executors';
import type { Row } from '../lib/report';
import { runSoakProcess } from '../lib/soak-process';
import type { SoakSample } from '../lib/soak-stats';
import { soakChecks } from '../lib/soak-stats';
// The specs' disconnectable proxy (plain node:net, nothing of jest), so that both drop sockets alike.
import { startDisconnectableProxy } from '../../spec/support/ws-proxy';

const ENV = 'bench-soak';
const CONCURRENT = 20;
const DROP_EVERY_MS = 10_000;
const HOLD_MS = 200;
const BASELINE_AT_MS = 30_000;

const stateIs = (environment: Environment, state: ConnectionState['state'], ms: number): Promise<unknown> =>
  firstValueFrom(environment.connectionState$.pipe(filter((s) => s.state === state), timeout(ms)));

export async function soakSuite(context: BenchContext): Promise<Row[]> {
  const durationMs = sized(context, 180_000, 45_000);
  const work = await mkdtemp(join(tmpdir(), 'exec-rx-soak-'));
  const host = await DirectHost.start();
  const proxy = trackCloser(await startDisconnectableProxy(host.port));
  host.dialVia(ENV, `ws://127.0.0.1:${proxy.port}/connect/${ENV}`);
  const { executor, socket } = await host.connectExecutor(ENV);
  const manager = await EnvironmentManager.fromAcceptedWebsocket(ENV, socket, { clientName: 'bench-soak' });
  const environment = manager.defaultEnvironment();
  if (environment === undefined) throw new Error('no default environment');
  host.adopt(ENV, (redial) => void manager.replaceAcceptedWebsocket(ENV, redial).catch(() => undefined));
  try {
    await context.settle();
    const baseline = { resources: process.getActiveResourcesInfo().length, rpc: bookkeeping(environment) };
    const samples: SoakSample[] = [];
    const t0 = performance.now();
    const sample = async (gced: boolean): Promise<void> => {
      if (gced) await context.settle();
      const usage = process.memoryUsage();
      samples.push({ ms: performance.now() - t0, heapUsed: usage.heapUsed, rss: usage.rss, gced });
    };
    let stop = false;
    let processes = 0;
    let notStarted = 0;
    let numbered = 0;
    const mismatches: string[] = [];
    const slot = async (): Promise<void> => {
      while (!stop) {
        const outcome = await runSoakProcess(environment, work, (numbered += 1));
        if (outcome.kind === 'notStarted') notStarted += 1;
        else processes += 1;
        if (outcome.kind === 'wrong') mismatches.push(outcome.detail);
      }
    };
    context.log(`  ${CONCURRENT} processes at a time for ${durationMs / 1000} s, a drop every ${DROP_EVERY_MS / 1000} s`);
    const slots = Array.from({ length: CONCURRENT }, () => slot());
    let drops = 0;
    let failedRecoveries = 0;
    // RSS every second; the heap after a forced GC once per drop cycle, half-way between two drops (the
    // same phase each time: streaming, no recovery read in flight), for the linear fit.
    const memory = setInterval(() => void sample(false), 1000);
    while (performance.now() - t0 < durationMs) {
      await new Promise((resolve) => setTimeout(resolve, DROP_EVERY_MS / 2));
      await sample(true);
      await new Promise((resolve) => setTimeout(resolve, DROP_EVERY_MS / 2));
      try {
        const down = stateIs(environment, 'disconnected', 15_000);
        proxy.pause();
        await down;
        await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
        const up = stateIs(environment, 'connected', 30_000);
        proxy.resume();
        await up;
        drops += 1;
      } catch (error: unknown) {
        failedRecoveries += 1;
        proxy.resume();
        context.log(`  drop ${drops + 1} did not recover: ${String(error)}`);
      }
      context.log(`    ${Math.round((performance.now() - t0) / 1000)} s: ${drops} drops, ${processes} processes, heap ${((samples.filter((x) => x.gced).at(-1)?.heapUsed ?? 0) / 2 ** 20).toFixed(1)} MiB after GC, RSS ${((samples.filter((x) => x.gced).at(-1)?.rss ?? 0) / 2 ** 20).toFixed(1)} MiB`);
    }
    stop = true;
    await Promise.all(slots);
    clearInterval(memory);
    await sample(true);
    await environment.forceInfo(); // a call answered after every earlier one
    const end = { resources: process.getActiveResourcesInfo().length, rpc: bookkeeping(environment) };
    return soakChecks({ samples, baselineAtMs: BASELINE_AT_MS, processes, notStarted, mismatches, drops, failedRecoveries, baseline, end, seconds: durationMs / 1000 });
  } finally {
    await manager.close({ terminateProcesses: true });
    await stopExecutor(executor);
    await proxy.close();
    await host.close();
    await rm(work, { recursive: true, force: true });
  }
}

/** Pending calls, routes and live processes of the current connection (0 for each when idle). */
function bookkeeping(environment: Environment): { readonly pending: number; readonly routes: number; readonly processes: number } {
  const state = environment.client.state;
  const rpc = state.type === 'connected' ? state.rpc : undefined;
  return { pending: rpc?.pendingCount ?? -1, routes: rpc?.processRouteCount ?? -1, processes: environment.client.processCount };
}

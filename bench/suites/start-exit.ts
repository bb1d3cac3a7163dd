/**
 * 3. Start → exit of `/bin/true`: from just before `process/start` to the `exited` event, one process at a
 * time (each run waits for `closed` before the next start). A turn starts `starts` processes and
 * reports their median. Listen mode (exec-rx dials, ack-pong on by default) and direct mode (the
 * executor dials the bench's registry url; exec-rx adopts the socket with `fromAcceptedWebsocket`,
 * whose default is no ack-pong). Raw is measured with ack-pong, and without it beside.
 */
import type WebSocket from 'ws';
import { EnvironmentManager } from '../../src';
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import { DirectHost, stopExecutor, withListening } from '../lib/executors';
import type { SpawnedExecutor } from '../../src/executor/spawn-executor';
import { RawClient } from '../lib/raw-client';
import { figure } from '../lib/report';
import type { Figure, Row } from '../lib/report';
import { rawRun, rxConnect, rxEnvironment, rxRun } from '../lib/runs';
import type { ProcessRun } from '../lib/runs';
import { interleave, median, percentile, series } from '../lib/stats';
import type { Metrics } from '../lib/stats';

const ARGV = ['/bin/true'];

async function turn(starts: number, run: () => Promise<ProcessRun>): Promise<Metrics> {
  const times: number[] = [];
  for (let i = 0; i < starts; i += 1) {
    const result = await run();
    times.push(result.exitMs);
  }
  const sorted = [...times].sort((a, b) => a - b);
  return { ms: median(times), p90: percentile(sorted, 90), max: sorted[sorted.length - 1] ?? Number.NaN };
}

function figures(mode: string, runs: Record<'raw' | 'rx' | 'ctl' | 'rawNoAck', Metrics[]>, rxNote: string): Figure[] {
  return [
    figure({
      suite: 'start→exit',
      label: `/bin/true, ${mode}`,
      unit: 'ms',
      raw: series(runs.raw, 'ms'),
      rx: series(runs.rx, 'ms'),
      ctl: series(runs.ctl, 'ms'),
      beside: { label: 'raw without ack-pong', values: series(runs.rawNoAck, 'ms') },
      ratioGoal: { max: 1.1 },
      note: `${rxNote}; p90 of each turn's starts (median over runs): raw ${median(series(runs.raw, 'p90')).toFixed(2)} ms, exec-rx ${median(series(runs.rx, 'p90')).toFixed(2)} ms, raw without ack-pong ${median(series(runs.rawNoAck, 'p90')).toFixed(2)} ms`,
    }),
  ];
}

export async function startExitSuite(context: BenchContext): Promise<Row[]> {
  const starts = sized(context, 25, 6);
  context.log(`  listen mode: ${starts} starts per turn`);
  const listen = await withListening(1, async ([url = '']) => {
    const raw = await RawClient.dial(url, { ackPong: true });
    const rawNoAck = await RawClient.dial(url, { ackPong: false });
    const manager = await rxConnect(url);
    try {
      const environment = rxEnvironment(manager);
      const runs = await interleave(
        {
          raw: () => turn(starts, () => rawRun(raw, ARGV)),
          rx: () => turn(starts, () => rxRun(environment, ARGV)),
          ctl: () => turn(starts, () => rawRun(raw, ARGV)),
          rawNoAck: () => turn(starts, () => rawRun(rawNoAck, ARGV)),
        },
        { runs: context.runs, warmup: 1, between: context.settle, log: context.log },
      );
      return figures('listen', runs, 'exec-rx: EnvironmentManager.connect (ack-pong on, its default)');
    } finally {
      raw.close();
      rawNoAck.close();
      await manager.close();
    }
  });

  context.log(`  direct mode: ${starts} starts per turn`);
  const host = await DirectHost.start();
  const executors: SpawnedExecutor[] = [];
  const sockets: WebSocket[] = [];
  let manager: EnvironmentManager | undefined;
  const clients: RawClient[] = [];
  try {
    const connect = async (id: string): Promise<WebSocket> => {
      const { executor, socket } = await host.connectExecutor(id);
      executors.push(executor);
      sockets.push(socket);
      return socket;
    };
    const [rawSocket, rxSocket, noAckSocket] = await Promise.all([connect('bench-direct-raw'), connect('bench-direct-rx'), connect('bench-direct-raw-noack')]);
    const raw = await RawClient.adopt(rawSocket, { ackPong: true });
    const rawNoAck = await RawClient.adopt(noAckSocket, { ackPong: false });
    clients.push(raw, rawNoAck);
    manager = await EnvironmentManager.fromAcceptedWebsocket('bench-direct-rx', rxSocket, { clientName: 'bench-rx', keepalive: false });
    const environment = rxEnvironment(manager);
    const runs = await interleave(
      {
        raw: () => turn(starts, () => rawRun(raw, ARGV)),
        rx: () => turn(starts, () => rxRun(environment, ARGV)),
        ctl: () => turn(starts, () => rawRun(raw, ARGV)),
        rawNoAck: () => turn(starts, () => rawRun(rawNoAck, ARGV)),
      },
      { runs: context.runs, warmup: 1, between: context.settle, log: context.log },
    );
    return [...listen, ...figures('direct', runs, 'exec-rx: EnvironmentManager.fromAcceptedWebsocket (its default: no ack-pong); one executor per side')];
  } finally {
    for (const client of clients) client.close();
    await manager?.close();
    for (const socket of sockets) socket.terminate();
    await Promise.all(executors.map((executor) => stopExecutor(executor)));
    await host.close();
  }
}

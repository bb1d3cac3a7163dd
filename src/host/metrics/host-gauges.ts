/**
 * The gauges of a host's metrics, read when scraped: environments and processes by state, open event
 * streams, pending calls, the executor pauses the disk caused, for a log store that keeps files its
 * bytes, segments and evictions, and with an operator API its tokens (how many, and their set's digest).
 * What they read is the host's facts, the log store's figures and the tokens: never a second count kept
 * beside the code that knows.
 */
import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { LogStoreFigures } from '../../store/log-store';
import type { HostFacts } from '../host-monitor';

/** What the operator token gauges read of the accepted set (`OperatorTokens` is one): never a token. */
export interface TokenSetFigures {
  /** The set's digest (`OperatorTokens.setDigest`). */
  readonly setDigest: string;
  /** How many tokens it holds. */
  readonly size: number;
}

/** Registers the gauges in `registry`, each named with `prefix` (see the module's doc); the log store's only when `outputLog` is given. */
export function registerGauges(registry: Registry, prefix: string, facts: () => HostFacts, outputLog: (() => LogStoreFigures) | undefined): void {
  const registers = [registry];
  const environments = new Gauge({
    name: `${prefix}environments`,
    help: "Environments (current generations) by connection state ('starting' until the first handshake finished).",
    labelNames: ['state'],
    registers,
    collect: () => {
      for (const [state, count] of Object.entries(facts().environments)) environments.set({ state }, count);
    },
  });
  const processes = new Gauge({
    name: `${prefix}processes`,
    help: "Listed processes by state, over every environment's current generation.",
    labelNames: ['state'],
    registers,
    collect: () => {
      for (const [state, count] of Object.entries(facts().processes)) processes.set({ state }, count);
    },
  });
  const single = (name: string, help: string, read: () => number): void => {
    const gauge: Gauge = new Gauge({
      name: prefix + name,
      help,
      registers,
      collect: () => {
        gauge.set(read());
      },
    });
  };
  single('event_streams', 'Open operator API event streams (SSE subscribers).', () => facts().eventStreams);
  single('rpc_pending_calls', 'JSON-RPC calls sent to executors and not answered yet.', () => facts().pendingCalls);
  // Counters the host keeps itself: set to its total at each scrape.
  const total = (name: string, help: string, read: () => number): void => {
    const counter: Counter = new Counter({
      name: prefix + name,
      help,
      registers,
      collect: () => {
        counter.reset();
        counter.inc(read());
      },
    });
  };
  total('disk_pauses_total', "Times an executor was paused because a process's output log on disk could not keep up.", () => facts().diskPauses);
  const unaccounted = 'Processes a take-back left neither adopted nor lost (a broken invariant: 0 unless there is a bug; each is logged and marked lost).';
  total('take_back_unaccounted_total', unaccounted, () => facts().unaccountedTakeBacks);
  if (outputLog === undefined) return;
  single('output_log_bytes', "Bytes of every output log's segments on disk.", () => outputLog().diskBytes);
  single('output_log_segments', 'Segment files of the output logs.', () => outputLog().segments);
  const evictions = new Counter({
    name: `${prefix}output_log_evictions_total`,
    help: 'Output logs removed for the total bound or retention, and segments dropped for a per-process quota, by cause.',
    labelNames: ['cause'],
    registers,
    collect: () => {
      evictions.reset();
      for (const [cause, count] of Object.entries(outputLog().evictions)) evictions.inc({ cause }, count);
    },
  });
}

/**
 * Registers the operator token gauges in `registry`, read when scraped: `operator_tokens_info{digest}` 1 for
 * the set accepted now (only that digest: a reload replaces it), and `operator_tokens`, how many.
 */
export function registerTokenGauges(registry: Registry, prefix: string, read: () => TokenSetFigures): void {
  const registers = [registry];
  const info: Gauge<'digest'> = new Gauge<'digest'>({
    name: `${prefix}operator_tokens_info`,
    help: 'The digest of the operator tokens accepted now (value 1): replicas with the same digest accept the same set.',
    labelNames: ['digest'],
    registers,
    collect: () => {
      info.reset();
      info.set({ digest: read().setDigest }, 1);
    },
  });
  const count: Gauge = new Gauge({
    name: `${prefix}operator_tokens`,
    help: 'Operator tokens accepted now.',
    registers,
    collect: () => {
      count.set(read().size);
    },
  });
}

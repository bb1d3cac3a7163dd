/**
 * The counters of a replica that forwards owner-only calls (issue 39, `../api/forwarding`), read from
 * the forwarder's own counts when scraped: what it forwarded and how that ended, and the signed forwards
 * it refused (a key another replica signs with that this one does not accept: a rotation half done).
 */
import { Counter } from 'prom-client';
import type { Registry } from 'prom-client';
import type { ForwardingFigures } from '../api/forwarding';

/**
 * Registers `<prefix>forwarded_calls_total{outcome}` (`answered` by the owner, `owner_unreachable`: 503,
 * `lost`: 502) and `<prefix>forwards_refused_total` on `registry`, both read from `read()` when scraped.
 */
export function registerForwardingCounters(registry: Registry, prefix: string, read: () => ForwardingFigures): void {
  const registers = [registry];
  const calls: Counter<'outcome'> = new Counter<'outcome'>({
    name: `${prefix}forwarded_calls_total`,
    help: 'Owner-only calls this replica forwarded to the owner, by outcome (answered, owner_unreachable, lost).',
    labelNames: ['outcome'],
    registers,
    collect: () => {
      const figures = read();
      calls.reset();
      calls.inc({ outcome: 'answered' }, figures.answered);
      calls.inc({ outcome: 'owner_unreachable' }, figures.unreachable);
      calls.inc({ outcome: 'lost' }, figures.lost);
    },
  });
  const refused: Counter = new Counter({
    name: `${prefix}forwards_refused_total`,
    help: 'Signed forwards from other replicas this replica refused (401 FORWARD_REFUSED).',
    registers,
    collect: () => {
      refused.reset();
      refused.inc(read().refused);
    },
  });
}

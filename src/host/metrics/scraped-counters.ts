/**
 * Counters whose values are read when scraped from a count the code that knows it keeps (a replica's
 * cluster figures, its forwarder's): never a second count beside it. Registering is all; nothing to tear
 * down but the registry.
 */
import { Counter } from 'prom-client';
import type { Registry } from 'prom-client';

/** Registers counter `name` on `registry`: its value is `read()` when scraped. */
export function scrapedCounter(registry: Registry, name: string, help: string, read: () => number): void {
  const counter: Counter = new Counter({
    name,
    help,
    registers: [registry],
    collect: () => {
      counter.reset();
      counter.inc(read());
    },
  });
}

/** Registers counter `name` labelled `label` on `registry`: one sample per key of `read()` when scraped, its value that key's. */
export function scrapedCounters(registry: Registry, name: string, help: string, label: string, read: () => Readonly<Record<string, number>>): void {
  const counter: Counter<string> = new Counter<string>({
    name,
    help,
    labelNames: [label],
    registers: [registry],
    collect: () => {
      counter.reset();
      for (const [value, count] of Object.entries(read())) counter.inc({ [label]: value }, count);
    },
  });
}

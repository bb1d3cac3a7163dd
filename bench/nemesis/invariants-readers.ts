/**
 * The readers of one process, checked (`./output-check`): each reader's events in order and its bytes
 * against the expected output (an echo's against its stdin writes), its markers justified by a fault, its
 * exit code, and how it ended. The same problem met by several readers is said once, naming them.
 */
import type { ReaderHistory, StdinHistory, TrackedProcess } from './history';
import type { Invariant, Justifications } from './invariants';
import { checkBytes, checkEcho, checkEvents } from './output-check';

/** What the reader checks report: a problem (with its invariant) and the readers that met it. */
export type ReaderFinding = readonly [Invariant, string, readonly string[]];

/** A reader's segments in a few words (`b#2>40:moved, …`), its last ones. */
const segmentsOf = (reader: ReaderHistory): string =>
  reader.segments
    .map((segment) => `${segment.where}>${segment.afterSeq}:${segment.outcome.slice(0, 50)}`)
    .join(', ')
    .slice(-400);

/**
 * Checks every reader of `tracked` (see the module's doc). Returns the findings, each problem once with
 * the readers that met it, and pushes the justified markers and losses to `notes`.
 */
export function checkReaders(
  tracked: TrackedProcess,
  readers: readonly ReaderHistory[],
  stdin: StdinHistory | undefined,
  why: Justifications,
  until: number,
  notes: string[],
): ReaderFinding[] {
  const { plan } = tracked;
  const justified = why.loss(tracked, until);
  const gone = why.dataLoss(tracked.start.firstAt);
  const found = new Map<string, { invariant: Invariant; readers: string[] }>();
  const add = (invariant: Invariant, problem: string, reader: string): void => {
    const key = `${invariant}\u0000${problem}`;
    const entry = found.get(key) ?? { invariant, readers: [] };
    entry.readers.push(reader);
    found.set(key, entry);
  };
  const live = readers[0];
  for (const reader of readers) {
    const check = checkEvents(reader.events);
    if (plan.expected !== undefined) checkBytes(check, Buffer.from(plan.expected));
    for (const problem of check.problems) add('output', problem, reader.name);
    if (stdin !== undefined) {
      const complete = check.ending === 'closed' && check.markers.length === 0;
      for (const problem of checkEcho(Buffer.concat(check.parts).toString('utf8'), stdin.writes, complete)) add('stdin-once', problem, reader.name);
    }
    for (const marker of check.markers) {
      const said = `marker ${marker.fromSeq}..${marker.toSeq} (${marker.reason ?? 'no reason'}, ${marker.droppedBytes} B)`;
      if (justified === undefined) add('output', `${said} with no fault that justifies one`, reader.name);
      else notes.push(`${plan.tag}: ${reader.name}: ${said}, justified by ${justified}`);
    }
    if (check.exitCode !== undefined && check.exitCode !== plan.exitCode) add('exit-code', `exited ${check.exitCode}, expected ${plan.exitCode}`, reader.name);
    if (reader.outcome === 'closed') continue;
    // Its executor restarted: the process died with it, its stream ends PROCESS_GONE (whatever state the API shows, checked apart).
    if (reader.outcome.startsWith('failed PROCESS_GONE') && justified !== undefined) continue;
    if (gone !== undefined && reader.segments.length > 0 && reader.segments.every((segment) => segment.outcome.startsWith('refused'))) {
      notes.push(`${plan.tag}: ${reader.name} refused (${reader.segments[0]?.outcome.slice(0, 60) ?? ''}): gone with Redis's data (fault ${gone.planned.index})`);
      continue;
    }
    // The cluster no longer knows the process (Redis lost it, the API answers 404): a reader that gave up after
    // it, or was answered 404 once it came back, is justified by that loss; what it read before was checked above.
    const forgottenEnd = reader.outcome === 'gave up' || reader.outcome.startsWith('refused 404');
    if (gone !== undefined && tracked.final?.state.startsWith('answer ') === true && forgottenEnd) {
      notes.push(`${plan.tag}: ${reader.name} ${reader.outcome.slice(0, 40)}: the process is gone with Redis's data (fault ${gone.planned.index})`);
      continue;
    }
    // Late readers of a process whose live reader never saw its end are not told apart: the live one says it.
    if (reader !== live && live?.outcome === 'gave up') continue;
    add('output', `ended ${reader.outcome === 'gave up' ? 'without reaching the end (gave up)' : reader.outcome}; ${reader.name}'s segments: ${segmentsOf(reader)}`, reader.name);
  }
  return [...found].map(([key, { invariant, readers: names }]) => [invariant, key.split('\u0000')[1] ?? '', names] as const);
}

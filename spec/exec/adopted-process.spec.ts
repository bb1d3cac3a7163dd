/**
 * The pieces an adopted process (EnvironmentManager.adoptAcceptedWebsocket) relies on: a reorder buffer
 * that starts after the host's last seq and can skip what the executor evicted, and a history that takes
 * ONE `truncated` input for that hole.
 */
import type { ProcessEvent, TruncatedEvent } from '../../src/exec/process-event';
import { EventHistory } from '../../src/exec/event-history';
import { ReorderBuffer } from '../../src/exec/reorder-buffer';
import { closed, output } from './event-builders';

describe('an adopted process', () => {
  it('its reorder buffer publishes from startAfterSeq + 1, and skipTo drops what waits at or below the skip', () => {
    const buffer = new ReorderBuffer('p1', undefined, 4);
    expect(buffer.lastPublishedSeq).toBe(4);
    expect(buffer.push(output(4, 'old'))).toEqual([]);
    expect(buffer.push(output(5, 'five'))).toEqual([output(5, 'five')]);
    expect(buffer.push(output(7, 'seven'))).toEqual([]);
    expect(buffer.push(output(11, 'eleven'))).toEqual([]);
    buffer.skipTo(9);
    expect(buffer.lastPublishedSeq).toBe(9);
    expect([...buffer.pendingSeqs()]).toEqual([11]);
    expect(buffer.pendingBytes).toBe(6);
    expect(buffer.push(output(10, 'ten'))).toEqual([output(10, 'ten'), output(11, 'eleven')]);
    buffer.skipTo(3);
    expect(buffer.lastPublishedSeq).toBe(11);
  });

  it('its history gives live and late subscribers ONE truncated marker for the hole, then the rest', () => {
    const history = new EventHistory();
    const live: ProcessEvent[] = [];
    history.eventsAfter$(0).subscribe((event) => live.push(event));
    const marker: TruncatedEvent = { type: 'truncated', nextSeq: 10, droppedEvents: 5, droppedBytes: 0 };
    history.append(marker);
    history.append(output(10, 'ten'));
    history.append(closed(11));

    expect(live).toEqual([marker, output(10, 'ten'), closed(11)]);
    const late: ProcessEvent[] = [];
    history.eventsAfter$(4).subscribe((event) => late.push(event));
    expect(late).toEqual([marker, output(10, 'ten'), closed(11)]);
    const resuming: ProcessEvent[] = [];
    history.eventsAfter$(10).subscribe((event) => resuming.push(event));
    expect(resuming).toEqual([closed(11)]);
    expect(history.historyStartSeq).toBe(10);
  });
});

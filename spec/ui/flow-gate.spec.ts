/**
 * The dashboard's flow control (src/ui/flow-gate.ts, plain TypeScript: no DOM): above the high
 * watermark of unwritten bytes it drops once, below the low one it resumes once, and a reset forgets a drop.
 */
import { FlowGate, HIGH_WATER, LOW_WATER } from '../../src/ui/flow-gate';

describe('FlowGate', () => {
  it('drops once above HIGH and resumes once below LOW, counting what xterm has not written', () => {
    const calls: string[] = [];
    const gate = new FlowGate(() => calls.push('drop'), () => calls.push('resume'));
    expect([HIGH_WATER, LOW_WATER]).toEqual([512 * 1024, 128 * 1024]);
    gate.queued(HIGH_WATER);
    expect(calls).toEqual([]);
    gate.queued(1);
    gate.queued(1000);
    expect({ calls, dropped: gate.isDropped, unwritten: gate.unwritten }).toEqual({ calls: ['drop'], dropped: true, unwritten: HIGH_WATER + 1001 });
    gate.written(HIGH_WATER + 1001 - LOW_WATER);
    expect(calls).toEqual(['drop']);
    gate.written(1);
    gate.written(1);
    expect({ calls, dropped: gate.isDropped, unwritten: gate.unwritten }).toEqual({ calls: ['drop', 'resume'], dropped: false, unwritten: LOW_WATER - 2 });
  });

  it('forgets a drop on reset (a new selection asks for its own stream)', () => {
    const calls: string[] = [];
    const gate = new FlowGate(() => calls.push('drop'), () => calls.push('resume'), 10, 5);
    gate.queued(11);
    gate.reset();
    gate.written(11);
    gate.queued(11);
    expect(calls).toEqual(['drop', 'drop']);
  });
});

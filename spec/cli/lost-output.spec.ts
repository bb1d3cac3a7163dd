/**
 * How a run that lost output ends (`endAfter`): its own exit code when no `truncated` marker came, else
 * 254 and a last line naming the command's exit code and what was lost; `logs` (no exit code) the same
 * with 0 in place of the code. The note said at each marker names its bytes when the marker counted them.
 */
import { EXIT_OUTPUT_LOST } from '../../src/cli/exit-codes';
import { endAfter, LostOutput, truncatedNote } from '../../src/cli/lost-output';

describe('endAfter: the exit status of a run that may have lost output', () => {
  it('is the command\'s own exit code when nothing was lost, and 0 for logs', () => {
    expect(endAfter(0, new LostOutput())).toEqual({ status: 0 });
    expect(endAfter(3, new LostOutput())).toEqual({ status: 3 });
    expect(endAfter(undefined, new LostOutput())).toEqual({ status: 0 });
  });

  it('is 254 once a marker came, with a line naming the command\'s exit code and the events lost', () => {
    const lost = new LostOutput();
    lost.add({ droppedEvents: 12 });
    lost.add({ droppedEvents: 3 });
    expect(endAfter(0, lost)).toEqual({ status: EXIT_OUTPUT_LOST, line: 'output was lost: 15 events no longer held when they were to be written; the command exited with 0' });
    expect(endAfter(7, lost).line).toMatch(/; the command exited with 7$/);
    expect(endAfter(undefined, lost)).toEqual({ status: EXIT_OUTPUT_LOST, line: 'output was lost: 15 events no longer held when they were to be written' });
    expect(EXIT_OUTPUT_LOST).toBe(254);
  });

  it('names the bytes only when every marker said them', () => {
    const known = new LostOutput();
    known.add({ droppedEvents: 1, droppedBytes: 65536 });
    known.add({ droppedEvents: 2, droppedBytes: 100 });
    expect(endAfter(1, known).line).toBe('output was lost: 3 events (65636 bytes) no longer held when they were to be written; the command exited with 1');
    const partly = new LostOutput();
    partly.add({ droppedEvents: 1, droppedBytes: 65536 });
    // The executor's own window says 0 bytes for events it dropped: it does not know.
    partly.add({ droppedEvents: 2, droppedBytes: 0 });
    expect(endAfter(1, partly).line).toBe('output was lost: 3 events no longer held when they were to be written; the command exited with 1');
  });
});

describe('truncatedNote: the line said where a marker is', () => {
  it('names where the hole is and the events, and the bytes when the marker counted them', () => {
    expect(truncatedNote({ nextSeq: 9, droppedEvents: 7, droppedBytes: 1_048_576 })).toBe('output before seq 9 is no longer held (7 events, 1048576 bytes)');
    expect(truncatedNote({ nextSeq: 2, droppedEvents: 1, droppedBytes: 1 })).toBe('output before seq 2 is no longer held (1 event, 1 byte)');
    // No bytes from a host that sent none (an older one, or the executor's window), nor 0 for events dropped (unknown).
    expect(truncatedNote({ nextSeq: 9, droppedEvents: 7 })).toBe('output before seq 9 is no longer held (7 events)');
    expect(truncatedNote({ nextSeq: 9, droppedEvents: 7, droppedBytes: 0 })).toBe('output before seq 9 is no longer held (7 events)');
  });
});

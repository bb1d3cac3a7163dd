import { Deadlines } from '../../src/rpc/deadlines';
import { PauseClock } from '../../src/rpc/pause-clock';
import { testScheduler } from '../support/marbles';

describe('Deadlines', () => {
  it('fires each deadline at its own time, in virtual time, with one queue per timeout value', () => {
    const scheduler = testScheduler();
    const deadlines = new Deadlines(scheduler);
    const fired: string[] = [];
    deadlines.arm(100, () => fired.push(`a@${scheduler.now()}`));
    scheduler.schedule(() => deadlines.arm(100, () => fired.push(`b@${scheduler.now()}`)), 30);
    deadlines.arm(50, () => fired.push(`c@${scheduler.now()}`));
    scheduler.flush();
    expect(fired).toEqual(['c@50', 'a@100', 'b@130']);
    expect(deadlines.size).toBe(0);
  });

  it('does not fire a cancelled deadline and holds nothing once the head settles', () => {
    const scheduler = testScheduler();
    const deadlines = new Deadlines(scheduler);
    const fired: number[] = [];
    const handles = Array.from({ length: 5000 }, (_, i) => deadlines.arm(1_000, () => fired.push(i)));
    for (const [i, handle] of handles.entries()) if (i !== 4321) handle.cancel();
    expect(deadlines.size).toBe(5000 - 4321);
    handles[4321]?.cancel();
    expect(deadlines.size).toBe(0);
    scheduler.flush();
    expect(fired).toEqual([]);
  });

  it('keeps a later deadline when an earlier one in the same queue was cancelled', () => {
    const scheduler = testScheduler();
    const deadlines = new Deadlines(scheduler);
    const fired: string[] = [];
    const first = deadlines.arm(100, () => fired.push('first'));
    scheduler.schedule(() => {
      deadlines.arm(100, () => fired.push(`second@${scheduler.now()}`));
      first.cancel();
    }, 40);
    scheduler.flush();
    expect(fired).toEqual(['second@140']);
  });

  it('counts no suspended time on a clock that stands still while suspended', () => {
    const scheduler = testScheduler();
    const clock = new PauseClock(scheduler);
    const deadlines = new Deadlines(scheduler, clock);
    const fired: string[] = [];
    deadlines.arm(100, () => fired.push(`a@${scheduler.now()}`));
    deadlines.arm(300, () => fired.push(`b@${scheduler.now()}`));
    const suspend = (): void => {
      clock.pause();
      deadlines.suspend();
    };
    const resume = (): void => {
      clock.resume();
      deadlines.resume();
    };
    scheduler.schedule(suspend, 50);
    // Armed while suspended: its 100 start on resume.
    scheduler.schedule(() => deadlines.arm(100, () => fired.push(`c@${scheduler.now()}`)), 60);
    scheduler.schedule(resume, 250);
    scheduler.flush();
    expect(fired).toEqual(['a@300', 'c@350', 'b@500']);
    expect(deadlines.size).toBe(0);
  });
});

import { TestScheduler } from 'rxjs/testing';

/** A TestScheduler asserting with Jest's toEqual. */
export const testScheduler = (): TestScheduler =>
  new TestScheduler((actual, expected) => {
    expect(actual).toEqual(expected);
  });

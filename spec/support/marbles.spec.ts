import { throwError } from 'rxjs';
import { ClosedError, ProtocolError, TransportClosedError } from '../../src/errors';
import { errorIdentity, testScheduler } from './marbles';

describe('testScheduler', () => {
  it('passes an error of the same class, code and message', () => {
    testScheduler().run(({ expectObservable }) => {
      expectObservable(throwError(() => new ClosedError('gone'))).toBe('#', undefined, new ClosedError('gone'));
    });
  });

  it('fails an error of another class with the same message, which toEqual alone would pass', () => {
    expect(() =>
      testScheduler().run(({ expectObservable }) => {
        expectObservable(throwError(() => new ProtocolError('gone'))).toBe('#', undefined, new ClosedError('gone'));
      }),
    ).toThrow(/ClosedError/);
  });

  it('names class, code and message of an error, and leaves other values alone', () => {
    expect(errorIdentity(new TransportClosedError('remote', 1006, 'peer vanished'))).toEqual({
      errorClass: 'TransportClosedError',
      code: 'TRANSPORT_CLOSED',
      message: expect.stringContaining('peer vanished'),
    });
    expect(errorIdentity('plain')).toBe('plain');
  });
});

/**
 * `EnvironmentManager.close` in virtual time: it waits for the helpers still cleaning up after sized
 * ttys (`ExecBackend.idle`), but at most 2 s of its scheduler's time, then closes the connection; when
 * they finish first it goes on at once. On a real timer the bound would not fire while the virtual clock
 * moves, and the first spec would fail.
 */
import { EnvironmentManager } from '../../src/environment/environment-manager';
import { FakeSocketPort } from '../support/fake-socket-port';
import { VirtualClock } from '../support/virtual-time';

/** An executor socket that answers `initialize` at once. */
const executor = (): FakeSocketPort =>
  new FakeSocketPort((frame, peer) => {
    if (frame['method'] === 'initialize') peer.deliver({ id: frame['id'], result: { sessionId: 'session-1' } });
  });

/** A manager on `clock` over a fresh executor socket, and that socket. */
async function managerOn(clock: VirtualClock): Promise<{ readonly manager: EnvironmentManager; readonly port: FakeSocketPort }> {
  const port = executor();
  const manager = await clock.run(EnvironmentManager.fromAcceptedWebsocket('env-1', port, { clientName: 'host', scheduler: clock, keepalive: false }));
  return { manager, port };
}

/** Whether `promise` has settled (after what is pending has run). */
function tracked(promise: Promise<void>): { readonly done: () => boolean } {
  let done = false;
  void promise.then(() => (done = true));
  return { done: () => done };
}

describe('EnvironmentManager.close: the bound on waiting for helpers (virtual time)', () => {
  it('closes the connection after 2 s of the scheduler\'s time when the helpers are still running', async () => {
    const clock = new VirtualClock();
    const { manager, port } = await managerOn(clock);
    const environment = manager.defaultEnvironment();
    if (environment === undefined) throw new Error('no default environment');
    // A helper that never finishes.
    jest.spyOn(environment.getExecBackend(), 'idle').mockReturnValue(new Promise<void>(() => undefined));
    const closing = tracked(manager.close());
    await clock.advance(1_999);
    expect({ closed: closing.done(), portOpen: port.isOpen }).toEqual({ closed: false, portOpen: true });
    await clock.advance(1);
    expect({ closed: closing.done(), portOpen: port.isOpen }).toEqual({ closed: true, portOpen: false });
  });

  it('goes on at once when the helpers finish first, leaving no timer behind', async () => {
    const clock = new VirtualClock();
    const { manager, port } = await managerOn(clock);
    const closing = tracked(manager.close());
    await clock.advance(0);
    expect({ closed: closing.done(), portOpen: port.isOpen, at: clock.now() }).toEqual({ closed: true, portOpen: false, at: 0 });
    expect(clock.actions.filter((action) => action.delay === 2_000)).toEqual([]);
  });
});

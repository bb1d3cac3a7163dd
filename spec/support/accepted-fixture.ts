/**
 * The setup of specs that accept executor sockets themselves: a fresh loopback acceptor for each test,
 * and the managers and scripted peers a test registers, closed after it (managers first, then peers,
 * then the acceptor). Call it inside a `describe`.
 */
import type { EnvironmentManager } from '../../src';
import type { Acceptor } from './acceptor';
import { startAcceptor } from './acceptor';
import type { ScriptedPeer } from './scripted-peer';

/** What a test of such a spec uses: the current acceptor, and the lists its cleanup empties. */
export interface AcceptedFixture {
  /** The acceptor of the running test. */
  readonly acceptor: () => Acceptor;
  /** Managers to close after the test. */
  readonly managers: EnvironmentManager[];
  /** Scripted executors to close after the test. */
  readonly peers: ScriptedPeer[];
}

export function acceptedFixture(): AcceptedFixture {
  let current: Acceptor | undefined;
  const managers: EnvironmentManager[] = [];
  const peers: ScriptedPeer[] = [];
  beforeEach(async () => {
    current = await startAcceptor();
  });
  afterEach(async () => {
    for (const manager of managers.splice(0)) await manager.close();
    for (const peer of peers.splice(0)) peer.close();
    await current?.close();
    current = undefined;
  });
  return {
    acceptor: () => {
      if (current === undefined) throw new Error('the acceptor exists only while a test runs');
      return current;
    },
    managers,
    peers,
  };
}

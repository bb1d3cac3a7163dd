/**
 * Table-driven over every method (codex `RemoteApi::ALL`): calls wait for recovery before dispatch, and
 * after an ambiguous disconnect only what is safe to send twice is sent again.
 */
import type { Subject } from 'rxjs';
import { firstValueFrom } from 'rxjs';
import { TransportClosedError } from '../../src/errors';
import type { ExecClient } from '../../src/session/exec-client';
import type { MethodName } from '../../src/wire/methods';
import { isReplayable, METHODS } from '../../src/wire/methods';
import { FakeSocketPort } from '../support/fake-socket-port';
import { connectedClient } from '../support/scripted-client';
import { SAMPLE_PARAMS } from '../support/sample-params';

const ALL = (Object.keys(METHODS) as MethodName[]).filter((m) => m !== 'initialize');
const REPLAYABLE = ALL.filter(isReplayable);
const NON_REPLAYABLE = ALL.filter((m) => !isReplayable(m));

/** An executor that answers initialize and leaves every other request unanswered (a reply that never comes). */
const silentExecutor = (): FakeSocketPort =>
  new FakeSocketPort((frame, peer) => {
    if (frame['method'] === 'initialize') peer.deliver({ id: frame['id'], result: { sessionId: 'session-1' } });
  });

const call = (client: ExecClient, method: MethodName): Promise<unknown> =>
  firstValueFrom(client.call(method, SAMPLE_PARAMS[method] as never)).then(
    (v) => ({ value: v }),
    (e: unknown) => e,
  );

async function connected(): Promise<{ client: ExecClient; sockets: Subject<FakeSocketPort>; first: FakeSocketPort }> {
  const first = silentExecutor();
  return { ...(await connectedClient(first)), first };
}

const sentAfterHandshake = (port: FakeSocketPort): unknown[] => port.sent.filter((m) => m['method'] !== 'initialize' && m['method'] !== 'initialized').map((m) => [m['method'], m['params']]);

describe('replay rules for every method', () => {
  it('marks exactly the cursor read, the writeId write and terminate as safe to send again', () => {
    expect(REPLAYABLE).toEqual(['process/read', 'process/write', 'process/terminate']);
  });

  it.each(ALL)('%s made while recovering waits, then is dispatched on the new socket', async (method) => {
    const { client, sockets, first } = await connected();
    first.drop('gone');
    const pending = call(client, method);
    expect(sentAfterHandshake(first)).toEqual([]);
    const second = silentExecutor();
    sockets.next(second);
    await Promise.resolve();
    expect(sentAfterHandshake(second).map((entry) => (entry as unknown[])[0])).toEqual([method]);
    client.close();
    await pending;
  });

  it.each(NON_REPLAYABLE)('%s is not sent again after an ambiguous disconnect: it fails with TransportClosedError', async (method) => {
    const { client, sockets, first } = await connected();
    const pending = call(client, method);
    expect(first.sent.at(-1)?.['method']).toBe(method);
    first.drop('gone');
    expect(await pending).toBeInstanceOf(TransportClosedError);
    const second = silentExecutor();
    sockets.next(second);
    expect(sentAfterHandshake(second)).toEqual([]);
    client.close();
  });

  it.each(REPLAYABLE)('%s is sent again, with the same params, after an ambiguous disconnect', async (method) => {
    const { client, sockets, first } = await connected();
    const pending = call(client, method);
    const sentFirst = first.sent.at(-1);
    first.drop('gone');
    const second = silentExecutor();
    sockets.next(second);
    await Promise.resolve();
    expect(second.sent.at(-1)).toEqual({ ...sentFirst, id: expect.any(Number) as unknown });
    expect(second.sent.at(-1)?.['params']).toEqual(sentFirst?.['params']);
    client.close();
    await pending;
  });
});

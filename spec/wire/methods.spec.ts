import * as E from 'fp-ts/lib/Either';
import { DecodeError } from '../../src/errors';
import {
  CLIENT_NOTIFICATIONS,
  decodeNotification,
  decodeNotificationParams,
  decodeResult,
  decodeServerRequestParams,
  encodeParams,
  encodeServerRequestResult,
  isMethodName,
  isNotificationMethod,
  isReplayable,
  isServerRequestMethod,
  METHODS,
  NOTIFICATIONS,
  SERVER_REQUESTS,
} from '../../src/wire/methods';
import type { MethodName, NotificationOf, NotificationParamsOf, ParamsOf, ResultOf } from '../../src/wire/methods';

/** The methods the 0.171.0 executor answered when probed (docs/protocol.md#methods), verbatim. */
const PROBED = [
  'initialize',
  'environment/status',
  'environment/info',
  'environmentConfig/read',
  'process/start',
  'process/read',
  'process/write',
  'process/signal',
  'process/terminate',
  'fs/readFile',
  'fs/writeFile',
  'fs/createDirectory',
  'fs/getMetadata',
  'fs/canonicalize',
  'fs/readDirectory',
  'fs/walk',
  'fs/remove',
  'fs/copy',
  'fs/open',
  'fs/readBlock',
  'fs/writeBlock',
  'fs/close',
  'fs/watchMissing',
  'http/request',
  'capabilityRoots/discoverV1',
  'capabilities/discoverV2',
];

const methodNames = Object.keys(METHODS).filter(isMethodName);

describe('METHODS', () => {
  it('holds exactly the methods the 0.171.0 executor answers', () => {
    expect([...methodNames].sort()).toEqual([...PROBED].sort());
  });

  it('marks exactly process/read, process/write and process/terminate replayable', () => {
    expect(methodNames.filter(isReplayable).sort()).toEqual(['process/read', 'process/terminate', 'process/write']);
  });

  it.each(methodNames)('names the params and result codecs of %s', (method) => {
    expect(typeof METHODS[method].params.name).toBe('string');
    expect(typeof METHODS[method].result.name).toBe('string');
  });

  it('tells method names from other strings', () => {
    expect(['process/start', 'process/list', 'toString', 'process/output'].map(isMethodName)).toEqual([true, false, false, false]);
  });
});

describe('encodeParams', () => {
  it('omits params of methods without any', () => {
    expect([encodeParams('environment/status', undefined), encodeParams('environment/info', undefined)]).toEqual([undefined, undefined]);
  });

  it('turns bytes into base64', () => {
    expect(encodeParams('process/write', { processId: 'cat', chunk: Buffer.from('first\n'), writeId: 'w1' })).toEqual({
      processId: 'cat',
      chunk: 'Zmlyc3QK',
      writeId: 'w1',
    });
    expect(encodeParams('fs/writeBlock', { handleId: 'h1', offset: 0, chunk: Buffer.from('hello') })).toEqual({ handleId: 'h1', offset: 0, chunk: 'aGVsbG8=' });
  });

  it('passes a plain payload through unchanged', () => {
    expect(encodeParams('initialize', { clientName: 'probe', resumeSessionId: 'c8' })).toEqual({ clientName: 'probe', resumeSessionId: 'c8' });
  });
});

describe('decodeResult', () => {
  it('decodes bytes in results', () => {
    expect(decodeResult('fs/readBlock', { chunk: 'aGVsbG8=', eof: false })).toEqual(E.right({ chunk: Buffer.from('hello'), eof: false }));
  });

  it('names the method codec and path of a bad result', () => {
    expect(decodeResult('process/terminate', { running: 'yes' })).toEqual(
      E.left(new DecodeError('TerminateResponse', ['Invalid value "yes" supplied to : TerminateResponse/running: boolean'])),
    );
  });

  it('types results by method', () => {
    const decoded: E.Either<DecodeError, ResultOf<'process/write'>> = decodeResult('process/write', { status: 'stdinClosed' });
    expect(decoded).toEqual(E.right({ status: 'stdinClosed' }));
  });
});

describe('NOTIFICATIONS', () => {
  it('lists the notifications the executor sends (docs/protocol.md#methods)', () => {
    expect(Object.keys(NOTIFICATIONS).sort()).toEqual([
      'fs/missingChanged',
      'http/request/bodyDelta',
      'network/policyDecision',
      'process/closed',
      'process/exited',
      'process/output',
    ]);
  });

  it('tells known notification methods from others', () => {
    expect(['process/output', 'initialized', 'bogus/notif'].map(isNotificationMethod)).toEqual([true, false, false]);
  });

  it('decodes a notification into a value tagged by method', () => {
    const decoded: E.Either<DecodeError, NotificationOf> = decodeNotification('process/output', { processId: 'p1', seq: 1, stream: 'stdout', chunk: 'b3V0MQo=' });
    expect(decoded).toEqual(E.right({ method: 'process/output', params: { processId: 'p1', seq: 1, stream: 'stdout', chunk: Buffer.from('out1\n') } }));
  });

  it('decodes the loose network/policyDecision audit event, keeping its fields', () => {
    const params = { processId: 'p', decision: 'deny', host: 'example.com', port: 443, protocol: 'https_connect' };
    expect(decodeNotification('network/policyDecision', params)).toEqual(E.right({ method: 'network/policyDecision', params }));
  });

  it('decodes a notification\'s params alone, typed by its method', () => {
    const decoded: E.Either<DecodeError, NotificationParamsOf<'http/request/bodyDelta'>> = decodeNotificationParams('http/request/bodyDelta', {
      requestId: 'r1',
      seq: 2,
      deltaBase64: 'cGFydDI=',
      done: true,
      error: null,
    });
    expect(decoded).toEqual(E.right({ requestId: 'r1', seq: 2, deltaBase64: Buffer.from('part2'), done: true, error: null }));
    expect(decodeNotificationParams('process/closed', { processId: 'p1', seq: 'last' })).toEqual(
      E.left(new DecodeError('ProcessClosedNotification', ['Invalid value "last" supplied to : ProcessClosedNotification/seq: NonNegativeInteger'])),
    );
  });

  it('names the path of a bad notification', () => {
    expect(decodeNotification('fs/missingChanged', { watchId: 'w' })).toEqual(
      E.left(new DecodeError('FsMissingChangedNotification', ['Invalid value "w" supplied to : FsMissingChangedNotification/watchId: NonNegativeInteger'])),
    );
  });

  it('lists initialized as the only notification we send', () => {
    expect(Object.keys(CLIENT_NOTIFICATIONS)).toEqual(['initialized']);
  });
});

describe('SERVER_REQUESTS', () => {
  it('knows network/policyRequest only', () => {
    expect(Object.keys(SERVER_REQUESTS)).toEqual(['network/policyRequest']);
    expect(['network/policyRequest', 'process/start'].map(isServerRequestMethod)).toEqual([true, false]);
  });

  it('decodes policy request params and encodes each decision', () => {
    const params = { processId: 'p', request: { protocol: 'https_connect', host: 'example.com', port: 443 } };
    expect(decodeServerRequestParams('network/policyRequest', params)).toEqual(E.right(params));
    expect(
      [{ type: 'allow' as const }, { type: 'deny' as const, reason: 'not_allowed' }, { type: 'ask' as const, reason: 'why' }].map((decision) =>
        encodeServerRequestResult('network/policyRequest', { decision }),
      ),
    ).toEqual([{ decision: { type: 'allow' } }, { decision: { type: 'deny', reason: 'not_allowed' } }, { decision: { type: 'ask', reason: 'why' } }]);
  });

  it('rejects a decision of another type', () => {
    expect(E.isLeft(SERVER_REQUESTS['network/policyRequest'].result.decode({ decision: { type: 'maybe' } }))).toBe(true);
  });
});

describe('method types', () => {
  it('holds bytes as Uint8Array on our side and undefined for no params', () => {
    const chunk: ParamsOf<'process/write'>['chunk'] = new Uint8Array([1]);
    const none: ParamsOf<'environment/status'> = undefined;
    // @ts-expect-error: bytes are not base64 strings on our side
    const notBytes: ParamsOf<'fs/writeBlock'>['chunk'] = 'aGVsbG8=';
    // @ts-expect-error: only table methods are names
    const notAMethod: MethodName = 'process/list';
    expect([chunk, none, notBytes, notAMethod]).toEqual([new Uint8Array([1]), undefined, 'aGVsbG8=', 'process/list']);
  });
});

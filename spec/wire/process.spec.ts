import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either';
import { DecodeError } from '../../src/errors';
import { decodeWith } from '../../src/wire/decode';
import {
  decodeProcessOutput,
  ExecParams,
  ProcessClosedNotification,
  ProcessExitedNotification,
  ProcessOutputNotification,
  processOutputOf,
  ReadParams,
  ReadResponse,
  WriteParams,
} from '../../src/wire/process';
import { processOutputParams } from './arbitraries';

const bytes = (text: string): Buffer => Buffer.from(text);
const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe('decodeProcessOutput', () => {
  it('decodes the chunk to raw bytes', () => {
    expect(decodeProcessOutput({ processId: 'p1', seq: 1, stream: 'stdout', chunk: 'b3V0MQo=' })).toEqual(
      E.right({ processId: 'p1', seq: 1, stream: 'stdout', chunk: bytes('out1\n') }),
    );
  });

  it('drops unknown members', () => {
    expect(decodeProcessOutput({ processId: 'p', seq: 2, stream: 'pty', chunk: '', extra: true })).toEqual(
      E.right({ processId: 'p', seq: 2, stream: 'pty', chunk: Buffer.alloc(0) }),
    );
  });

  it('rejects a chunk that is not base64 with a DecodeError naming the path', () => {
    expect(decodeProcessOutput({ processId: 'p1', seq: 1, stream: 'stdout', chunk: 'b3V0MQo' })).toEqual(
      E.left(new DecodeError('ProcessOutputNotification', ['Invalid value "b3V0MQo" supplied to : ProcessOutputNotification/chunk: Base64Bytes'])),
    );
  });

  it('rejects a string seq with a DecodeError naming the path', () => {
    expect(decodeProcessOutput({ processId: 'p1', seq: '1', stream: 'stdout', chunk: 'b3V0MQo=' })).toEqual(
      E.left(new DecodeError('ProcessOutputNotification', ['Invalid value "1" supplied to : ProcessOutputNotification/seq: NonNegativeInteger'])),
    );
  });

  it.each<[string, unknown]>([
    ['a float seq', { processId: 'p', seq: 1.5, stream: 'stdout', chunk: '' }],
    ['a negative seq', { processId: 'p', seq: -1, stream: 'stdout', chunk: '' }],
    ['an unknown stream', { processId: 'p', seq: 1, stream: 'tty', chunk: '' }],
    ['a missing processId', { seq: 1, stream: 'stdout', chunk: '' }],
    ['null params', null],
    ['array params', []],
  ])('rejects %s', (_what, params) => {
    expect(E.isLeft(decodeProcessOutput(params))).toBe(true);
  });

  it('agrees with the ProcessOutputNotification codec on any params (property)', () => {
    let accepted = 0;
    fc.assert(
      fc.property(processOutputParams(), (params) => {
        const expected = decodeWith(ProcessOutputNotification)(params);
        if (E.isRight(expected)) accepted += 1;
        expect(decodeProcessOutput(params)).toEqual(expected);
        expect(processOutputOf(params)).toEqual(E.isRight(expected) ? expected.right : undefined);
      }),
      { numRuns: 2000 },
    );
    // The generator must reach both outcomes often, or the property proves little.
    expect(accepted).toBeGreaterThan(200);
    expect(accepted).toBeLessThan(1800);
  });

  it('round-trips any notification it decodes (property)', () => {
    const notification = fc.record({
      processId: fc.string(),
      seq: fc.nat(),
      stream: fc.constantFrom('stdout' as const, 'stderr' as const, 'pty' as const),
      chunk: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
    });
    fc.assert(
      fc.property(notification, (n) => {
        expect(decodeProcessOutput(json(ProcessOutputNotification.encode(n)))).toEqual(E.right(n));
      }),
    );
  });
});

describe('process notifications', () => {
  it('reads a missing sandboxDenied on process/exited as false', () => {
    expect(decodeWith(ProcessExitedNotification)({ processId: 'p1', seq: 4, exitCode: 5 })).toEqual(
      E.right({ processId: 'p1', seq: 4, exitCode: 5, sandboxDenied: false }),
    );
  });

  it('keeps a negative exit code and rejects a float one', () => {
    expect(decodeWith(ProcessExitedNotification)({ processId: 'p', seq: 1, exitCode: -1, sandboxDenied: true })).toEqual(
      E.right({ processId: 'p', seq: 1, exitCode: -1, sandboxDenied: true }),
    );
    expect(E.isLeft(decodeWith(ProcessExitedNotification)({ processId: 'p', seq: 1, exitCode: 1.5 }))).toBe(true);
  });

  it('requires seq on process/closed (the README form without it is obsolete)', () => {
    expect(decodeWith(ProcessClosedNotification)({ processId: 'p1' })).toEqual(
      E.left(new DecodeError('ProcessClosedNotification', ['Invalid value undefined supplied to : ProcessClosedNotification/seq: NonNegativeInteger'])),
    );
  });
});

describe('ExecParams', () => {
  const minimal = { processId: 'p1', argv: ['true'], cwd: 'file:///tmp', env: {}, tty: false };

  it('accepts every optional field of process/start (docs/protocol.md#process-methods)', () => {
    const full = {
      ...minimal,
      pipeStdin: true,
      arg0: 'custom-argv0',
      envPolicy: { inherit: 'core', ignoreDefaultExcludes: false, exclude: ['AWS_*'], set: { A: 'b' }, includeOnly: [] },
      metadata: { threadId: '429aeb80-ceec-42be-8a05-783cf40afdfc', toolCallId: 'call-1' },
      shellSnapshot: { scopeId: 's', shell: { name: 'bash', path: '/bin/bash' } },
      sandbox: { permissions: { type: 'disabled' } },
      enforceManagedNetwork: false,
      managedNetwork: { loopbackPorts: [8080], allowLocalBinding: true },
      networkProxy: { executionId: 'e1', policyDecisionTimeoutMs: 1000, auditMetadata: {} },
    };
    expect(decodeWith(ExecParams)(full)).toEqual(E.right(full));
  });

  it('accepts null for arg0, envPolicy and sandbox', () => {
    const nulls = { ...minimal, arg0: null, envPolicy: null, sandbox: null };
    expect(decodeWith(ExecParams)(nulls)).toEqual(E.right(nulls));
  });

  it('rejects params without cwd, naming the path', () => {
    expect(decodeWith(ExecParams)({ processId: 'p1', argv: ['true'], env: {}, tty: false })).toEqual(
      E.left(new DecodeError('ExecParams', ['Invalid value undefined supplied to : ExecParams/0: ExecParams (required)/cwd: string'])),
    );
  });

  it('drops unknown keys when encoding, so nothing untyped is sent', () => {
    const withExtra: ExecParams = Object.assign({ ...minimal }, { secret: 'x' });
    expect(ExecParams.encode(withExtra)).toEqual(minimal);
  });

  it('round-trips any params (property)', () => {
    const params = fc.record(
      {
        processId: fc.string(),
        argv: fc.array(fc.string(), { minLength: 1, maxLength: 3 }),
        cwd: fc.webUrl(),
        env: fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), fc.string({ maxLength: 4 })),
        tty: fc.boolean(),
        pipeStdin: fc.boolean(),
        arg0: fc.option(fc.string(), { nil: null }),
        enforceManagedNetwork: fc.boolean(),
      },
      { requiredKeys: ['processId', 'argv', 'cwd', 'env', 'tty'] },
    );
    fc.assert(
      fc.property(params, (p) => {
        expect(decodeWith(ExecParams)(json(ExecParams.encode(p)))).toEqual(E.right(p));
      }),
    );
  });
});

describe('ReadParams / ReadResponse', () => {
  it('treats null like absent in read params', () => {
    const params = { processId: 'process-1', afterSeq: 0, maxBytes: null, waitMs: 0 };
    expect(decodeWith(ReadParams)(params)).toEqual(E.right(params));
  });

  it('fills failure and sandboxDenied when a legacy executor omits them', () => {
    expect(decodeWith(ReadResponse)({ chunks: [], nextSeq: 1, exited: false, exitCode: null, closed: false })).toEqual(
      E.right({ chunks: [], nextSeq: 1, exited: false, exitCode: null, closed: false, failure: null, sandboxDenied: false }),
    );
  });

  it('names the path of a bad chunk inside the list', () => {
    const result = decodeWith(ReadResponse)({
      chunks: [{ seq: 1, stream: 'stdout', chunk: '!' }],
      nextSeq: 2,
      exited: false,
      exitCode: null,
      closed: false,
      failure: null,
      sandboxDenied: false,
    });
    expect(result).toEqual(
      E.left(new DecodeError('ReadResponse', ['Invalid value "!" supplied to : ReadResponse/chunks: Array<ProcessOutputChunk>/0: ProcessOutputChunk/chunk: Base64Bytes'])),
    );
  });

  it('round-trips any response (property)', () => {
    const chunk = fc.record({
      seq: fc.nat(),
      stream: fc.constantFrom('stdout' as const, 'stderr' as const, 'pty' as const),
      chunk: fc.uint8Array({ maxLength: 32 }).map((b) => Buffer.from(b)),
    });
    const response = fc.record({
      chunks: fc.array(chunk, { maxLength: 4 }),
      nextSeq: fc.nat(),
      exited: fc.boolean(),
      exitCode: fc.option(fc.integer({ min: -255, max: 255 }), { nil: null }),
      closed: fc.boolean(),
      failure: fc.option(fc.string(), { nil: null }),
      sandboxDenied: fc.boolean(),
    });
    fc.assert(
      fc.property(response, (r) => {
        expect(decodeWith(ReadResponse)(json(ReadResponse.encode(r)))).toEqual(E.right(r));
      }),
    );
  });
});

describe('WriteParams', () => {
  it('encodes the stdin bytes as base64', () => {
    expect(WriteParams.encode({ processId: 'cat', chunk: bytes('first\n'), writeId: 'w1' })).toEqual({ processId: 'cat', chunk: 'Zmlyc3QK', writeId: 'w1' });
  });
});

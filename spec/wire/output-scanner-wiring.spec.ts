import type { DecodeError } from '../../src/errors';
import type { FrameHandlers } from '../../src/rpc/frame-reader';
import { readFrame } from '../../src/rpc/frame-reader';
import type { Inbound, RequestId } from '../../src/wire/jsonrpc';
import type { OutputEvent } from '../../src/wire/process-event';

/** Handlers that record which one each frame reached. */
function recorder(): { readonly handlers: FrameHandlers; readonly calls: [string, unknown][] } {
  const calls: [string, unknown][] = [];
  const handlers: FrameHandlers = {
    unparsable: (error: DecodeError) => calls.push(['unparsable', error.what]),
    output: (processId: string, event: OutputEvent) => calls.push(['output', { processId, event }]),
    notification: (method: string, params: unknown) => calls.push(['notification', { method, params }]),
    response: (id: RequestId, result: unknown) => calls.push(['response', { id, result }]),
    message: (message: Inbound) => calls.push(['message', message.type]),
  };
  return { handlers, calls };
}

const output = '{"method":"process/output","params":{"processId":"p1","seq":3,"stream":"stdout","chunk":"b3V0MQo="}}';

describe('readFrame with the output scanner', () => {
  it('hands a process/output frame the scanner reads to `output`, unparsed', () => {
    const { handlers, calls } = recorder();
    readFrame(output, true, false, handlers);
    expect(calls).toEqual([['output', { processId: 'p1', event: { type: 'output', seq: 3, stream: 'stdout', chunk: Buffer.from('out1\n') } }]]);
  });

  it('reads a binary frame the same way', () => {
    const { handlers, calls } = recorder();
    readFrame(Buffer.from(output), false, false, handlers);
    expect(calls.map(([kind]) => kind)).toEqual(['output']);
  });

  it('classifies every frame while someone observes messages$ (the scanner stays out)', () => {
    const { handlers, calls } = recorder();
    readFrame(output, true, true, handlers);
    expect(calls).toEqual([['message', 'notification']]);
  });

  it('parses a frame the scanner declines, as before', () => {
    const { handlers, calls } = recorder();
    const withJsonrpc = '{"jsonrpc":"2.0","method":"process/output","params":{"processId":"p1","seq":3,"stream":"stdout","chunk":"b3V0MQo="}}';
    readFrame(withJsonrpc, true, false, handlers);
    readFrame('{"method":"process/closed","params":{"processId":"p1","seq":4}}', true, false, handlers);
    readFrame('{"id":1,"result":{}}', true, false, handlers);
    readFrame('{"method":"process/output",', true, false, handlers);
    expect(calls).toEqual([
      ['notification', { method: 'process/output', params: { processId: 'p1', seq: 3, stream: 'stdout', chunk: 'b3V0MQo=' } }],
      ['notification', { method: 'process/closed', params: { processId: 'p1', seq: 4 } }],
      ['response', { id: 1, result: {} }],
      ['unparsable', 'JSON'],
    ]);
  });
});

import * as E from 'fp-ts/lib/Either';
import { DecodeError } from '../../src/errors';
import { decodeWith } from '../../src/wire/decode';
import { EnvironmentConfigReadParams, EnvironmentInfo, EnvironmentStatusResponse } from '../../src/wire/environment';
import { InitializeParams, InitializeResponse } from '../../src/wire/initialize';
import { NoParams } from '../../src/wire/no-params';

const legacyInfo = { shell: { name: 'sh', path: '/bin/sh' }, cwd: null };

describe('EnvironmentInfo', () => {
  it('fills what a legacy executor omits: version 0.0.0, no PATH dirs, no capabilities', () => {
    expect(decodeWith(EnvironmentInfo)(legacyInfo)).toEqual(E.right({ ...legacyInfo, executorVersion: '0.0.0', prependPathDirs: [], capabilities: {} }));
  });

  it('never shares a default array between decodes', () => {
    const first = decodeWith(EnvironmentInfo)(legacyInfo);
    const second = decodeWith(EnvironmentInfo)(legacyInfo);
    expect(E.isRight(first) && E.isRight(second) && first.right.prependPathDirs !== second.right.prependPathDirs).toBe(true);
  });

  it('rejects a capability flag that is not a boolean, naming it', () => {
    expect(decodeWith(EnvironmentInfo)({ ...legacyInfo, capabilities: { fsWatchMissing: 'yes' } })).toEqual(
      E.left(new DecodeError('EnvironmentInfo', ['Invalid value "yes" supplied to : EnvironmentInfo/0: EnvironmentInfo (required)/capabilities: Capabilities/fsWatchMissing: boolean'])),
    );
  });

  it('drops fields it does not know', () => {
    expect(decodeWith(EnvironmentInfo)({ ...legacyInfo, executorVersion: '0.171.0', futureField: 1 })).toEqual(
      E.right({ ...legacyInfo, executorVersion: '0.171.0', prependPathDirs: [], capabilities: {} }),
    );
  });
});

describe('InitializeParams / InitializeResponse', () => {
  it('accepts a resume id or null', () => {
    expect(decodeWith(InitializeParams)({ clientName: 'probe2', resumeSessionId: 'c8' })).toEqual(E.right({ clientName: 'probe2', resumeSessionId: 'c8' }));
    expect(decodeWith(InitializeParams)({ clientName: '', resumeSessionId: null })).toEqual(E.right({ clientName: '', resumeSessionId: null }));
  });

  it('accepts a result without environmentInfo (older executors, test peers)', () => {
    expect(decodeWith(InitializeResponse)({ sessionId: 's1' })).toEqual(E.right({ sessionId: 's1' }));
  });

  it('rejects a result without sessionId, naming the path', () => {
    expect(decodeWith(InitializeResponse)({})).toEqual(
      E.left(new DecodeError('InitializeResponse', ['Invalid value undefined supplied to : InitializeResponse/0: InitializeResponse (required)/sessionId: string'])),
    );
  });
});

describe('NoParams', () => {
  it.each<[string, unknown]>([
    ['absent params', undefined],
    ['null', null],
    ['an empty object', {}],
  ])('accepts %s as no params', (_what, params) => {
    expect(decodeWith(NoParams)(params)).toEqual(E.right(undefined));
  });

  it.each<[string, unknown]>([
    ['an array', []],
    ['a non-empty object', { a: 1 }],
  ])('rejects %s, as the executor does', (_what, params) => {
    expect(E.isLeft(decodeWith(NoParams)(params))).toBe(true);
  });

  it('encodes to undefined so the request omits params', () => {
    expect(NoParams.encode(undefined)).toBeUndefined();
  });
});

describe('environment/status and environmentConfig/read', () => {
  it('accepts only the status the executor emits', () => {
    expect(decodeWith(EnvironmentStatusResponse)({ status: 'ready' })).toEqual(E.right({ status: 'ready' }));
    expect(E.isLeft(decodeWith(EnvironmentStatusResponse)({ status: 'busy' }))).toBe(true);
  });

  it('takes TOML key paths as lists of segments', () => {
    const params = { cwd: 'file:///tmp', configPaths: [['model']], requirementsPaths: [] };
    expect(decodeWith(EnvironmentConfigReadParams)(params)).toEqual(E.right(params));
  });
});

/**
 * The OpenAPI document names its operations for generators: every operation has an `operationId`,
 * camelCase and unique in the document, and tags declared (with a description) in the top-level `tags`;
 * every declared tag is used. An id names the act and its resource (`interruptProcess`; HostClient's
 * method is `interrupt`); a HEAD is its GET's id with `Head`.
 */
import { OPENAPI_DOCUMENT } from '../../../src/host/api/openapi';
import type { OpenApiDocument } from './openapi-document';
import { operationsOf } from './openapi-document';

const document = OPENAPI_DOCUMENT as unknown as OpenApiDocument;
const CAMEL_CASE = /^[a-z][a-zA-Z0-9]*$/;

describe('the OpenAPI document names its operations', () => {
  const operations = operationsOf(document);

  it('gives every operation a camelCase operationId, unique in the document', () => {
    const ids = operations.map((o) => o.operation.operationId);
    const wrong = operations.filter((o) => typeof o.operation.operationId !== 'string' || !CAMEL_CASE.test(o.operation.operationId)).map((o) => `${o.method} ${o.path}`);
    expect(wrong).toEqual([]);
    const repeated = ids.filter((id, index) => ids.indexOf(id) !== index);
    expect(repeated).toEqual([]);
    expect(ids.length).toBeGreaterThanOrEqual(20);
  });

  it('tags every operation with tags the document declares, each described, each used', () => {
    const declared = (document.tags ?? []).map((t) => t.name);
    expect(new Set(declared).size).toBe(declared.length);
    expect((document.tags ?? []).filter((t) => typeof t.description !== 'string' || t.description === '')).toEqual([]);
    const untagged = operations.filter((o) => (o.operation.tags ?? []).length === 0).map((o) => `${o.method} ${o.path}`);
    expect(untagged).toEqual([]);
    const undeclared = operations.flatMap((o) => (o.operation.tags ?? []).filter((tag) => !declared.includes(tag)).map((tag) => `${o.method} ${o.path}: ${tag}`));
    expect(undeclared).toEqual([]);
    const used = new Set(operations.flatMap((o) => o.operation.tags ?? []));
    expect(declared.filter((tag) => !used.has(tag))).toEqual([]);
  });

  it('names each operation by its act on its resource (startProcess, interruptProcess …), a HEAD by its GET', () => {
    const byRoute = Object.fromEntries(operations.map((o) => [`${o.method} ${o.path.replace('/api/v1/environments/{environmentId}/processes', '…')}`, o.operation.operationId]));
    expect(byRoute).toMatchObject({
      'GET /api/v1/host': 'getHost',
      'GET /api/v1/environments': 'listEnvironments',
      'GET /api/v1/environments/{environmentId}': 'getEnvironment',
      'GET /api/v1/overview': 'streamOverview',
      'GET …': 'listProcesses',
      'POST …': 'startProcess',
      'GET …/{processId}': 'getProcess',
      'DELETE …/{processId}': 'releaseProcess',
      'GET …/{processId}/events': 'streamProcessEvents',
      'POST …/{processId}/wait': 'waitProcess',
      'GET …/{processId}/log': 'getProcessLog',
      'POST …/{processId}/log/tickets': 'createLogTicket',
      'POST …/{processId}/stdin': 'writeStdin',
      'POST …/{processId}/stdin/end': 'endStdin',
      'POST …/{processId}/interrupt': 'interruptProcess',
      'POST …/{processId}/resize': 'resizeProcess',
      'POST …/{processId}/terminate': 'terminateProcess',
      'HEAD …/{processId}': 'getProcessHead',
      'GET /api/v1/environments/{environmentId}/previews': 'listPreviews',
      'PUT /api/v1/environments/{environmentId}/previews/{port}': 'sharePreview',
      'POST /api/v1/environments/{environmentId}/previews/{port}/links': 'createPreviewLink',
      'POST /api/v1/environments/{environmentId}/fetch': 'fetchFromEnvironment',
    });
  });
});

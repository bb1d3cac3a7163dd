/**
 * The committed `docs/openapi.json` is the document the source makes (what a host serves at
 * `/api/v1/openapi.json` and `npm run build` ships as `dist/openapi.json`), byte for byte: a change to
 * `src/host/api/openapi.ts` must come with the regenerated file (`npm run openapi`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPENAPI_DOCUMENT, openApiText } from '../../../src/host/api/openapi';

const COMMITTED = join(__dirname, '..', '..', '..', 'docs', 'openapi.json');
const REGENERATE = 'docs/openapi.json differs from the document src/host/api/openapi.ts makes: run `npm run openapi` and commit docs/openapi.json';

describe('docs/openapi.json', () => {
  it('is the document the source makes, byte for byte', () => {
    let committed: string;
    try {
      committed = readFileSync(COMMITTED, 'utf8');
    } catch {
      throw new Error(`docs/openapi.json is missing: run \`npm run openapi\` and commit it`);
    }
    // Compared as text with the message first, so a failure says how to fix it before the diff.
    const same = committed === openApiText();
    expect(same ? 'the same' : REGENERATE).toBe('the same');
    expect(JSON.parse(committed)).toEqual(OPENAPI_DOCUMENT);
  });
});

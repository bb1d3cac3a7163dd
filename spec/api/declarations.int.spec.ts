/**
 * The emitted declarations (`dist/src/**\/*.d.ts`, from `npm run build`, which `npm test` runs before
 * jest) show nothing marked `@internal`: `stripInternal` is on, and every member or constructor tagged
 * `@internal` in src/ is checked to be absent from its class in the emitted file.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..', '..');
const SRC = join(ROOT, 'src');
const DIST = join(ROOT, 'dist', 'src');

function files(dir: string, suffix: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(suffix) && !entry.name.endsWith('.d.ts.map'))
    .map((entry) => join(entry.parentPath, entry.name));
}

const parse = (path: string): ts.SourceFile => ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true);

const isInternal = (node: ts.Node): boolean => ts.getJSDocTags(node).some((tag) => tag.tagName.text === 'internal');

/** `Class.member` (or `Class.constructor`) for each class member tagged `@internal`, constructor parameter properties included. */
function internalMembers(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node) && node.name !== undefined) {
      const className = node.name.text;
      for (const member of node.members) {
        if (ts.isConstructorDeclaration(member)) {
          if (isInternal(member)) found.push(`${className}.constructor`);
          for (const parameter of member.parameters) {
            if (ts.getModifiers(parameter) !== undefined && isInternal(parameter) && ts.isIdentifier(parameter.name)) found.push(`${className}.${parameter.name.text}`);
          }
        } else if (isInternal(member) && member.name !== undefined && (ts.isIdentifier(member.name) || ts.isPrivateIdentifier(member.name))) {
          found.push(`${className}.${member.name.text}`);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `Class.member` for every member (and `Class.constructor`) declared in an emitted .d.ts. */
function declaredMembers(source: ts.SourceFile): Set<string> {
  const found = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node) && node.name !== undefined) {
      for (const member of node.members) {
        if (ts.isConstructorDeclaration(member)) found.add(`${node.name.text}.constructor`);
        else if (member.name !== undefined && ts.isIdentifier(member.name)) found.add(`${node.name.text}.${member.name.text}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('emitted declarations', () => {
  const sources = files(SRC, '.ts').map((path) => ({ path, internal: internalMembers(parse(path)) })).filter((s) => s.internal.length > 0);

  it('exist for every source file of the package (the build ran; src/ui is the dashboard, bundled by esbuild and declared nowhere)', () => {
    const declared = new Set(files(DIST, '.d.ts').map((path) => relative(DIST, path)));
    const missing = files(SRC, '.ts')
      .map((path) => relative(SRC, path))
      .filter((path) => !path.startsWith(`ui${sep}`))
      .map((path) => path.replace(/\.ts$/, '.d.ts'))
      .filter((path) => !declared.has(path));
    expect(missing).toEqual([]);
  });

  it('mention @internal nowhere', () => {
    const leaking = files(DIST, '.d.ts').filter((path) => readFileSync(path, 'utf8').includes('@internal'));
    expect(leaking).toEqual([]);
  });

  it('find internal members to check (the scan works)', () => {
    const all = sources.flatMap((s) => s.internal);
    expect(all).toEqual(expect.arrayContaining(['Environment.constructor', 'Environment.client', 'ExecProcess.inbox', 'ExecBackend.constructor']));
  });

  it('leave out every member tagged @internal in src/', () => {
    const visible = sources.flatMap(({ path, internal }) => {
      const declared = declaredMembers(parse(join(DIST, relative(SRC, path)).replace(/\.ts$/, '.d.ts')));
      return internal.filter((member) => declared.has(member));
    });
    expect(visible).toEqual([]);
  });
});

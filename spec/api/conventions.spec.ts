/**
 * The API conventions a machine can check (docs/api-conventions.md), read from the three entry points
 * with the TypeScript compiler: one name means one declaration in every entry; a stream without
 * arguments is a property, never a method; what holds a connection can be disposed with `await using`.
 */
import { join } from 'node:path';
import ts from 'typescript';

const root = join(__dirname, '..', '..');
const ENTRIES = { 'exec-rx': 'src/index.ts', 'exec-rx/host': 'src/host/index.ts', 'exec-rx/client': 'src/client/index.ts' } as const;

const program = ts.createProgram(
  Object.values(ENTRIES).map((file) => join(root, file)),
  { strict: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, lib: ['lib.es2022.d.ts', 'lib.esnext.disposable.d.ts'], types: ['node'], skipLibCheck: true, noEmit: true },
);
const checker = program.getTypeChecker();

/** The symbol an export stands for, through its aliases. */
const target = (symbol: ts.Symbol): ts.Symbol => ((symbol.flags & ts.SymbolFlags.Alias) !== 0 ? checker.getAliasedSymbol(symbol) : symbol);

/** Every export of an entry point, by name, resolved. */
function exportsOf(file: string): Map<string, ts.Symbol> {
  const source = program.getSourceFile(join(root, file));
  const moduleSymbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
  if (moduleSymbol === undefined) throw new Error(`no module symbol for ${file}`);
  return new Map(checker.getExportsOfModule(moduleSymbol).map((symbol) => [symbol.getName(), target(symbol)]));
}

const entries = Object.entries(ENTRIES).map(([name, file]) => ({ name, exports: exportsOf(file) }));

/** Where a symbol is declared, as `file:line` (what tells two declarations apart). */
const whereDeclared = (symbol: ts.Symbol): string =>
  (symbol.getDeclarations() ?? [])
    .map((declaration) => {
      const source = declaration.getSourceFile();
      return `${source.fileName.slice(root.length + 1)}:${source.getLineAndCharacterOfPosition(declaration.getStart()).line + 1}`;
    })
    .join(',');

/** The exported classes of every entry, once each. */
function exportedClasses(): ts.Symbol[] {
  const classes = new Map<string, ts.Symbol>();
  for (const { exports } of entries) for (const symbol of exports.values()) if ((symbol.flags & ts.SymbolFlags.Class) !== 0) classes.set(whereDeclared(symbol), symbol);
  return [...classes.values()];
}

describe('API conventions (docs/api-conventions.md)', () => {
  it('one name means one declaration: a name two entry points export is the same thing in both', () => {
    const seen = new Map<string, { entry: string; where: string }>();
    const clashes: string[] = [];
    for (const { name: entry, exports } of entries) {
      for (const [name, symbol] of exports) {
        const where = whereDeclared(symbol);
        const first = seen.get(name);
        if (first === undefined) seen.set(name, { entry, where });
        else if (first.where !== where) clashes.push(`${name}: ${first.entry} (${first.where}) vs ${entry} (${where})`);
      }
    }
    expect(clashes).toEqual([]);
  });

  it('a stream without arguments is a property, never a method', () => {
    const methods: string[] = [];
    for (const cls of exportedClasses()) {
      const instance = checker.getDeclaredTypeOfSymbol(cls);
      for (const member of checker.getPropertiesOfType(instance)) {
        if (!member.getName().endsWith('$') || (member.flags & ts.SymbolFlags.Method) === 0) continue;
        const signatures = checker.getTypeOfSymbol(member).getCallSignatures();
        if (signatures.some((signature) => signature.getParameters().length === 0)) methods.push(`${cls.getName()}.${member.getName()}()`);
      }
    }
    expect(methods).toEqual([]);
  });

  it('what holds a connection, a server or a data dir closes with await using ([Symbol.asyncDispose])', () => {
    const disposable = (name: string): boolean => {
      for (const { exports } of entries) {
        const symbol = exports.get(name);
        if (symbol === undefined) continue;
        const type = (symbol.flags & ts.SymbolFlags.Class) !== 0 ? checker.getDeclaredTypeOfSymbol(symbol) : checker.getDeclaredTypeOfSymbol(symbol);
        return checker.getPropertiesOfType(type).some((member) => member.getName() === '__@asyncDispose' || member.getName().startsWith('__@asyncDispose'));
      }
      throw new Error(`${name} is not exported`);
    };
    expect({ EnvironmentManager: disposable('EnvironmentManager'), HostClient: disposable('HostClient'), HostServer: disposable('HostServer'), HostState: disposable('HostState') }).toEqual({
      EnvironmentManager: true,
      HostClient: true,
      HostServer: true,
      HostState: true,
    });
  });
});

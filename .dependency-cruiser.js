// @ts-check
/**
 * The layer order of src/, enforced by `npm test` (`npm run layers`). Type-only imports count
 * (`tsPreCompilationDeps`): a type a lower layer needs moves down, it is not imported from above.
 *
 *   ui/                        the dashboard (browser code, tsconfig.ui.json): exec-rx/client's entry
 *                              (src/client/index.ts), rxjs and @xterm/* only; nothing of Node; nothing imports it
 *   cli/                       the command line: the only place that knows a terminal
 *   host/   executor/          the direct-transport server | spawning codex executors (rooms apart)
 *   store/                     the host's two ports (state, output logs) at its top; their adapters under
 *                              it (disk/, memory/, later redis/): the host reaches them through the ports
 *   client/                    exec-rx/client: the host's operator API over fetch (browser-safe: wire/ only)
 *   index.ts                   the main entry: the client library, no server code
 *   environment/               EnvironmentManager, Environment
 *   exec/   fs/   http/        processes, filesystem, HTTP (rooms apart) over the session's narrow port
 *   session/                   one logical client across sockets: handshake, resume, replacement
 *   rpc/                       JSON-RPC correlation over one socket
 *   transport/                 sockets as ports: ws, stdio, dialling
 *   wire/                      pure data: codecs, the method table, the event shapes
 *   errors/                    the typed errors every layer raises
 *
 * Each room may import from itself and the rooms listed under it, nothing else (ui/ has rules of its own,
 * below the layer rules: it sits beside the layers, on the client's public entry).
 */
const BELOW = {
  errors: [],
  wire: ['errors'],
  transport: ['errors', 'wire'],
  rpc: ['errors', 'wire', 'transport'],
  session: ['errors', 'wire', 'transport', 'rpc'],
  exec: ['errors', 'wire', 'transport', 'rpc', 'session'],
  fs: ['errors', 'wire', 'transport', 'rpc', 'session'],
  http: ['errors', 'wire', 'transport', 'rpc', 'session'],
  environment: ['errors', 'wire', 'transport', 'rpc', 'session', 'exec', 'fs', 'http'],
  index: ['errors', 'wire', 'transport', 'rpc', 'session', 'exec', 'fs', 'http', 'environment'],
  store: ['errors', 'wire', 'transport', 'rpc', 'session', 'exec'],
  host: ['errors', 'wire', 'transport', 'rpc', 'session', 'exec', 'fs', 'http', 'environment', 'store'],
  executor: ['errors', 'wire'],
  client: ['errors', 'wire'],
  cli: ['errors', 'wire', 'transport', 'rpc', 'session', 'exec', 'fs', 'http', 'environment', 'store', 'host', 'executor', 'client'],
};

/** The path pattern of a room: a folder, or one of the two top-level files. */
const room = (name) => (name === 'errors' ? 'src/errors/' : name === 'index' ? 'src/index\\.ts$' : `src/${name}/`);

const layerRules = Object.entries(BELOW).map(([name, allowed]) => ({
  name: `layer-${name}`,
  comment: `${name} may import only from ${allowed.length === 0 ? 'itself' : `itself and ${allowed.join(', ')}`} (see the table at the top of this file)`,
  severity: 'error',
  from: { path: `^${room(name)}` },
  to: { path: '^src/', pathNot: `^(${[name, ...allowed].map(room).join('|')})` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'no import cycle anywhere in src/, type-only imports included',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'ui-on-the-client-entry',
      comment: 'the dashboard (ui/) imports of ours only its own files and exec-rx/client (src/client/index.ts), never a client module behind it',
      severity: 'error',
      from: { path: '^src/ui/' },
      to: { path: '^src/', pathNot: '^src/(ui/|client/index\\.ts$)' },
    },
    {
      name: 'ui-packages',
      comment: 'the dashboard (ui/) is browser code: of packages only rxjs and @xterm/*, and no Node built-in',
      severity: 'error',
      from: { path: '^src/ui/' },
      to: { dependencyTypes: ['core', 'npm', 'npm-dev', 'npm-peer', 'npm-optional', 'npm-no-pkg', 'npm-unknown'], pathNot: '(^|/)node_modules/(rxjs|@xterm/[^/]+)/' },
    },
    {
      name: 'nothing-imports-ui',
      comment: 'the dashboard (ui/) is a leaf: no other room imports it (the host serves its built files, it does not import them)',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/ui/' },
      to: { path: '^src/ui/' },
    },
    {
      name: 'cli-run-and-remote-apart',
      comment: "exec-rx run's two sides are siblings: run/ (an executor we open) and remote/ (a host's environment) import neither each other; main chooses between them, and what both use lives in cli/terminal/ or cli/ itself",
      severity: 'error',
      from: { path: '^src/cli/(run|remote)/' },
      to: { path: '^src/cli/(run|remote)/', pathNot: '^src/cli/$1/' },
    },
    {
      name: 'cli-terminal-under-run-and-remote',
      comment: 'cli/terminal/ (our terminal: its size, raw mode, stdin, signals) is used by run/ and remote/ and imports neither',
      severity: 'error',
      from: { path: '^src/cli/terminal/' },
      to: { path: '^src/cli/(run|remote)/' },
    },
    {
      name: 'ws-at-the-edges',
      comment: 'ws is imported only by the transport adapters, the environment manager (its socket type) and the host',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(transport/(ws-socket-port|dial)\\.ts|environment/environment-manager\\.ts|host/)' },
      to: { path: 'node_modules/ws/' },
    },
    {
      name: 'aws4-in-the-host',
      comment: 'SigV4 verification (aws4) is server code: only the host imports it, so the main entry stays free of it',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/host/' },
      to: { path: 'node_modules/aws4/' },
    },
    {
      name: 'fs-where-files-are-the-job',
      comment:
        'fs (node:fs, fs, fs/promises: with or without the node: prefix) only in the disk store adapter (store/disk/), the loaders of ' +
        'configuration files (the host credentials, the operator tokens, the replica keys, the UI bundle), the command line and the executor spawner. ' +
        'Everything else keeps what it must through a store port (store/state-store.ts, store/log-store.ts)',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(store/disk/|cli/|executor/|host/(host-credentials|api/operator-tokens|api/replica-keys|api/ui-bundle)\\.ts$)' },
      to: { path: '^(node:)?fs(/promises)?$' },
    },
    {
      name: 'host-through-the-ports',
      comment:
        'the host reaches storage only through the ports at the top of store/: no adapter (store/disk, store/memory, store/redis) is ' +
        'imported in host/ but where the adapter is chosen (startHostServer in host-server.ts) and where the entry exports them (index.ts)',
      severity: 'error',
      from: { path: '^src/host/', pathNot: '^src/host/(host-server|index)\\.ts$' },
      to: { path: '^src/store/[^/]+/' },
    },
    {
      name: 'redis-in-store-redis',
      comment: 'a Redis client (redis, ioredis, @redis/*) only in store/redis/, the shared store adapter: loaded only when a host runs on Redis',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/store/redis/' },
      to: { path: '(^|node_modules/)(redis|ioredis|@redis/[^/]+)(/|$)' },
    },
    {
      name: 'client-is-browser-safe',
      comment: 'exec-rx/client runs in browsers: no Node built-in (node:*, fs, http ...) anywhere in its graph',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'no-unresolvable',
      comment: 'an import that resolves to nothing',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.d\\.ts$' },
    tsPreCompilationDeps: true,
    combinedDependencies: false,
    reporterOptions: { text: { highlightFocused: true } },
  },
};

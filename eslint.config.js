// @ts-check
const tseslint = require('typescript-eslint');
const stylistic = require('@stylistic/eslint-plugin');

/**
 * Time is a scheduler everywhere in src/: timers and the clock come from an rxjs `SchedulerLike` (an
 * option `scheduler`, default `asyncScheduler`), so specs can run them in virtual time.
 */
const TIME_MESSAGE = 'take time from the scheduler option (rxjs SchedulerLike, @default asyncScheduler): timer(ms, scheduler) or scheduler.schedule(...) for a timer, scheduler.now() for the clock';
const TIMER_GLOBALS = ['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate'];
const TIMER_MODULES = ['timers', 'node:timers', 'timers/promises', 'node:timers/promises'];
/** `no-restricted-globals` for `names`, each with the message. */
const restrictedGlobals = (names) => ['error', ...names.map((name) => ({ name, message: TIME_MESSAGE }))];

module.exports = tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '*.js'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: __dirname },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The dashboard (src/ui/) is browser code: its own tsconfig (the DOM library, no Node types), which the
    // root tsconfig.json excludes, so the project service would not find its files.
    files: ['src/ui/**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: false, project: ['./tsconfig.ui.json'], tsconfigRootDir: __dirname },
    },
  },
  {
    // spec/ and bench/ are not restricted: they may wait on real time.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-globals': restrictedGlobals(TIMER_GLOBALS),
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: TIME_MESSAGE },
        ...TIMER_GLOBALS.map((property) => ({ object: 'globalThis', property, message: TIME_MESSAGE })),
      ],
      'no-restricted-imports': ['error', { paths: TIMER_MODULES.map((name) => ({ name, message: TIME_MESSAGE })) }],
    },
  },
  {
    // A newcomer reads any source file at a glance: none over 300 lines (split a file where it has two jobs,
    // not at an arbitrary line), and none gets past the cap by growing wider: no line over 180 characters.
    // (Core ESLint's `max-len` is deprecated: @stylistic's is the kept one.) The nemesis (issue 38) holds
    // itself to the same.
    files: ['src/**/*.ts', 'bench/nemesis/**/*.ts', 'spec/nemesis/**/*.ts'],
    plugins: { '@stylistic': stylistic },
    rules: {
      'max-lines': ['error', { max: 300, skipBlankLines: false, skipComments: false }],
      '@stylistic/max-len': ['error', { code: 180 }],
    },
  },
  {
    // The one exception. The ack pong is sent one event-loop turn after a batch of received frames: in
    // the check phase right after the poll phase that read them. That is an ordering against I/O, not a
    // time: no scheduler expresses it (asyncScheduler waits for the timers phase, asapScheduler runs
    // before the rest of the batch is read). Timers and the clock stay restricted there.
    files: ['src/transport/ws-socket-port.ts'],
    rules: {
      'no-restricted-globals': restrictedGlobals(TIMER_GLOBALS.filter((name) => name !== 'setImmediate' && name !== 'clearImmediate')),
    },
  },
);

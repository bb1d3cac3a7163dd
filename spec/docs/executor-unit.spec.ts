/**
 * docs/exec-rx-executor.service, the systemd unit that runs a codex executor under a restart policy (an
 * executor exits when its first registration fails): `systemd-analyze verify` accepts it, it restarts
 * whatever the exit, and docs/replicas.md shows it whole.
 *
 * `systemd-analyze verify` refuses a unit whose ExecStart binary does not exist, so it checks a copy of
 * the unit whose binary path is replaced by the native codex binary the specs run
 * (`resolveCodexBinary`, as spec/support/executor.ts spawns it); nothing else of the unit changes. A
 * machine without systemd-analyze fails the spec with what to install, never skips it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveCodexBinary } from '../../src/executor/spawn-executor';

const ROOT = join(__dirname, '..', '..');
const UNIT = 'exec-rx-executor.service';
const SYSTEMD_ANALYZE = '/usr/bin/systemd-analyze';
/** The binary the unit names: where its comment says to copy the native codex binary. */
const UNIT_BINARY = '/usr/local/lib/codex/codex';

const unit = readFileSync(join(ROOT, 'docs', UNIT), 'utf8');

describe('the executor unit (docs/exec-rx-executor.service)', () => {
  it('passes `systemd-analyze verify` with its ExecStart pointed at the real codex binary', () => {
    if (!existsSync(SYSTEMD_ANALYZE)) throw new Error(`systemd-analyze is not installed (${SYSTEMD_ANALYZE}): install systemd (Debian: \`apt-get install -y systemd\`)`);
    const binary = resolveCodexBinary();
    const execStart = `\nExecStart=${UNIT_BINARY} `;
    expect(unit.split(execStart).length).toBe(2);
    const dir = mkdtempSync(join(tmpdir(), 'exec-rx-unit-'));
    try {
      const copy = join(dir, UNIT);
      writeFileSync(copy, unit.replace(execStart, `\nExecStart=${binary} `));
      const result = spawnSync(SYSTEMD_ANALYZE, ['verify', copy], { encoding: 'utf8', timeout: 30_000 });
      expect({ status: result.status, error: result.error, output: `${result.stdout}${result.stderr}` }).toEqual({ status: 0, error: undefined, output: '' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs the native binary in direct mode and restarts it whatever its exit, without a start limit', () => {
    const lines = unit.split('\n');
    const execStart = lines.find((line) => line.startsWith('ExecStart='));
    expect(execStart).toBe(`ExecStart=${UNIT_BINARY} exec-server --remote https://exec.example.com --remote-transport direct --aws-sigv4 --aws-region us-east-1 --environment-id build-1`);
    expect(lines).toEqual(expect.arrayContaining(['Restart=always', 'RestartSec=1', 'StartLimitIntervalSec=0', 'EnvironmentFile=/etc/exec-rx/executor.env']));
  });

  it('is the one docs/replicas.md shows', () => {
    expect(readFileSync(join(ROOT, 'docs', 'replicas.md'), 'utf8')).toContain(`\`\`\`ini\n${unit}\`\`\``);
  });
});

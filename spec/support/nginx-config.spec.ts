/**
 * The nginx configuration docs/replicas.md shows (docs/nginx.conf) is accepted by Debian's nginx (`nginx -t`,
 * with a temp prefix for its pid and logs; never started), is the one that page shows, and holds the lines
 * replicas need. A machine without nginx fails loudly with the command that installs it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const NGINX = '/usr/sbin/nginx';
const CONFIG = join(__dirname, '..', '..', 'docs', 'nginx.conf');

describe("the docs' nginx configuration", () => {
  it('passes `nginx -t`', () => {
    if (!existsSync(NGINX)) throw new Error(`nginx is not installed (${NGINX}): run \`bash scripts/install-test-deps.sh\` (as root it runs \`apt-get install -y nginx-light\`)`);
    const prefix = mkdtempSync(join(tmpdir(), 'exec-rx-nginx-'));
    try {
      mkdirSync(join(prefix, 'logs'));
      const result = spawnSync(NGINX, ['-t', '-p', prefix, '-c', CONFIG, '-e', join(prefix, 'logs', 'error.log')], { encoding: 'utf8', timeout: 10_000 });
      expect({ status: result.status, output: result.stderr }).toEqual({ status: 0, output: expect.stringContaining('test is successful') });
    } finally {
      rmSync(prefix, { recursive: true, force: true });
    }
  });

  it('is the one docs/replicas.md shows, with what replicas need', () => {
    const config = readFileSync(CONFIG, 'utf8');
    expect(readFileSync(join(__dirname, '..', '..', 'docs', 'replicas.md'), 'utf8')).toContain(`\`\`\`text\n${config}\`\`\``);
    for (const line of [
      'proxy_set_header Host $http_host;',
      'proxy_pass http://exec_rx_replicas;',
      'proxy_http_version 1.1;',
      'proxy_set_header Upgrade $http_upgrade;',
      'proxy_set_header Connection $connection_upgrade;',
      'proxy_read_timeout 1h;',
      'proxy_send_timeout 1h;',
      'proxy_buffering off;',
      'proxy_next_upstream error timeout http_502 http_503 non_idempotent;',
      'max_fails=2 fail_timeout=10s',
    ]) {
      expect(config).toContain(line);
    }
    // No URI after the upstream: nginx would replace the matched part of the path with it.
    expect(config).not.toMatch(/proxy_pass\s+https?:\/\/[^;\s]+\/[^;]*;/);
  });
});

/**
 * `exec-rx host`, the built cli: it prints the join command with placeholders, a real executor joins it
 * with the credentials filled in, SIGTERM stops it, and the secret never appears in its output.
 */
import { startDirectExecutor } from '../support/executor';
import { runCli, startCli } from './cli-process';

const KEY_ID = 'AKIDCLIHOST';
const SECRET = 'cli-host-secret-do-not-print';

describe('exec-rx host', () => {
  it('prints how to join, admits a signed executor, and stops on SIGTERM', async () => {
    const host = startCli(['host', '--port', '0'], { ...process.env, EXEC_RX_ACCESS_KEY_ID: KEY_ID, EXEC_RX_SECRET_ACCESS_KEY: SECRET });
    await host.waitFor('stdout', '--environment-id <environment-id>\n');
    const stdout = host.stdout.map((c) => c.text).join('');
    expect(stdout).toMatch(
      /^exec-rx host listening on http:\/\/127\.0\.0\.1:\d+\nOperator API and page: http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]{43}\nAn executor joins with:\n {2}AWS_ACCESS_KEY_ID=<access-key-id> AWS_SECRET_ACCESS_KEY=<secret-access-key> codex exec-server --remote http:\/\/127\.0\.0\.1:\d+ --remote-transport direct --aws-sigv4 --aws-region us-east-1 --environment-id <environment-id>\n$/,
    );
    const operatorUrl = /Operator API and page: (\S+)/.exec(stdout)?.[1] ?? '';
    const token = operatorUrl.split('#token=')[1] ?? '';
    const remoteUrl = /--remote (\S+)/.exec(stdout)?.[1] ?? '';

    const executor = await startDirectExecutor({ remoteUrl, environmentId: 'cli-host-1', credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } });
    await host.waitFor('stderr', 'environment cli-host-1 generation 1: connected');
    host.child.kill('SIGTERM');
    expect(await host.done).toEqual({ code: 0, signal: null });
    await executor.stop();

    const all = [...host.stdout, ...host.stderr].map((c) => c.text).join('');
    expect(all).toContain('accepting 1 access key(s) from environment');
    expect(all).not.toContain(SECRET);
    expect(all).not.toMatch(/Signature=/);
    // The operator url (with the token the host made) is written once, and the token nowhere else.
    expect(all.split(operatorUrl)).toHaveLength(2);
    expect(all.split(token)).toHaveLength(2);
  });

  it('refuses to start without accepted keys, saying where they go', async () => {
    const env = { ...process.env };
    delete env['EXEC_RX_ACCESS_KEY_ID'];
    delete env['EXEC_RX_SECRET_ACCESS_KEY'];
    delete env['EXEC_RX_CREDENTIALS_FILE'];
    const result = await runCli(['host'], '', env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no accepted access keys: pass --credentials-file FILE');
  });
});


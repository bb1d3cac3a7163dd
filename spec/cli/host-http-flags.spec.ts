/** `exec-rx host`'s flags of HTTP through the environments (issue 42): what they parse to, what they refuse, and the operator API's options they say. */
import { parseHostArgs, UsageError } from '../../src/cli/args';
import { httpOptionsOf } from '../../src/cli/host-http-flags';

const MiB = 1024 * 1024;

const httpOf = (args: readonly string[]): Record<string, unknown> => {
  const options = parseHostArgs(args);
  return {
    allowHttp: options.allowHttp,
    httpAllow: options.httpAllow,
    previewPort: options.previewPort,
    previewDomain: options.previewDomain,
    maxPreviewBody: options.maxPreviewBody,
    previewTimeoutMs: options.previewTimeoutMs,
  };
};

describe('exec-rx host HTTP flags', () => {
  it('leaves HTTP off and every bound unset when no flag is given', () => {
    expect(httpOf([])).toEqual({ allowHttp: false, httpAllow: [], previewPort: undefined, previewDomain: undefined, maxPreviewBody: undefined, previewTimeoutMs: undefined });
  });

  it('takes each flag: --http-allow repeated and as comma lists (blanks dropped), a size, seconds as ms', () => {
    const args = ['--allow-http', '--http-allow', '10.0.0.0/8, api.internal', '--http-allow', 'fd00::/8,,', '--preview-port', '8081', '--preview-domain', 'preview.example'];
    expect(httpOf([...args, '--max-preview-body', '2MiB', '--preview-timeout', '90'])).toEqual({
      allowHttp: true,
      httpAllow: ['10.0.0.0/8', 'api.internal', 'fd00::/8'],
      previewPort: 8081,
      previewDomain: 'preview.example',
      maxPreviewBody: 2 * MiB,
      previewTimeoutMs: 90_000,
    });
  });

  it('takes --preview-port from 0 (a free port) to 65535, and --max-preview-body up to 11MiB', () => {
    expect(httpOf(['--preview-port', '0']).previewPort).toBe(0);
    expect(httpOf(['--preview-port', '65535']).previewPort).toBe(65_535);
    expect(httpOf(['--max-preview-body', '11MiB']).maxPreviewBody).toBe(11 * MiB);
  });

  it.each([
    [['--preview-port', '65536'], '--preview-port expects a port from 0 to 65535'],
    [['--preview-port=-1'], '--preview-port expects a port from 0 to 65535'],
    [['--preview-port', 'http'], '--preview-port expects a port from 0 to 65535'],
    [['--preview-domain', 'preview.example'], '--preview-domain goes with --preview-port'],
    [['--max-preview-body', '12MiB'], '--max-preview-body is at most 11MiB'],
    [['--max-preview-body', `${11 * MiB + 1}`], '--max-preview-body is at most 11MiB'],
    [['--max-preview-body', '0'], '--max-preview-body expects a size'],
    [['--max-preview-body', 'lots'], '--max-preview-body expects a size'],
    [['--preview-timeout', '0'], '--preview-timeout expects whole seconds from 1 to 99999'],
    [['--preview-timeout', '1.5'], '--preview-timeout expects whole seconds'],
    [['--preview-timeout', '100000'], '--preview-timeout expects whole seconds'],
  ])('refuses %j with a usage error', (args, message) => {
    expect(() => parseHostArgs(args)).toThrow(UsageError);
    expect(() => parseHostArgs(args)).toThrow(message);
  });

  it("says the operator API's http option: only what was given, the rest left to its defaults", () => {
    expect(httpOptionsOf(parseHostArgs([]))).toEqual({ enabled: false, allow: [] });
    const given = parseHostArgs(['--allow-http', '--http-allow', '10.0.0.1', '--preview-port', '0', '--preview-domain', 'p.example', '--max-preview-body', '1MiB', '--preview-timeout', '5']);
    expect(httpOptionsOf(given)).toEqual({ enabled: true, allow: ['10.0.0.1'], previewDomain: 'p.example', maxBodyBytes: MiB, timeoutMs: 5000 });
  });
});

import { parseHostArgs, UsageError } from '../../src/cli/args';
import { dataDirOf, parseDuration, parseSize, storageOptions } from '../../src/cli/host-storage-args';

describe('exec-rx host storage flags', () => {
  it('puts the data dir under $XDG_STATE_HOME, else ~/.local/state, resolves a relative --data-dir, and takes none', () => {
    expect(dataDirOf(undefined, { XDG_STATE_HOME: '/state', HOME: '/home/u' }, '/cwd')).toBe('/state/exec-rx');
    expect(dataDirOf(undefined, { HOME: '/home/u' }, '/cwd')).toBe('/home/u/.local/state/exec-rx');
    // A relative XDG_STATE_HOME is invalid (XDG Base Directory): it is ignored.
    expect(dataDirOf(undefined, { XDG_STATE_HOME: 'rel', HOME: '/home/u' }, '/cwd')).toBe('/home/u/.local/state/exec-rx');
    expect(dataDirOf('logs', { HOME: '/home/u' }, '/cwd')).toBe('/cwd/logs');
    expect(dataDirOf('none', { HOME: '/home/u' }, '/cwd')).toBeUndefined();
    expect(() => dataDirOf(undefined, {}, '/cwd')).toThrow(new UsageError('no data dir: HOME is not set; pass --data-dir DIR (or none)'));
  });

  it('reads sizes in bytes or with binary units, and durations with a unit', () => {
    expect([parseSize('--log-quota', '1048576', 1), parseSize('--log-quota', '32MiB', 1), parseSize('--log-quota', '1G', 1), parseSize('--log-quota', '2 kb', 1)]).toEqual([1048576, 32 * 1024 ** 2, 1024 ** 3, 2048]);
    expect(() => parseSize('--log-quota', '12 bananas', 1)).toThrow(UsageError);
    expect(() => parseSize('--log-quota', '1K', 1024 * 1024)).toThrow('--log-quota expects a size of at least 1048576 bytes');
    expect([parseDuration('--log-retention', '7d'), parseDuration('--log-retention', '12h'), parseDuration('--log-retention', '90s'), parseDuration('--log-retention', '250ms')]).toEqual([604_800_000, 43_200_000, 90_000, 250]);
    expect(() => parseDuration('--log-retention', '7')).toThrow('--log-retention expects a duration such as 7d, 12h, 30m or 90s');
    expect(() => parseDuration('--log-retention', '0s')).toThrow(UsageError);
  });

  it('checks the flags when parsed, and refuses bounds without a data dir', () => {
    expect(parseHostArgs(['--data-dir', '/d', '--log-quota', '32MiB', '--log-total', '1G', '--log-retention', '1d']).storage).toEqual({ 'data-dir': '/d', 'log-quota': '32MiB', 'log-total': '1G', 'log-retention': '1d' });
    expect(() => parseHostArgs(['--log-quota', 'lots'])).toThrow(UsageError);
    expect(() => parseHostArgs(['--data-dir', 'none', '--log-retention', '1d'])).toThrow('they do not go with --data-dir none');
    expect(storageOptions({ 'data-dir': '/d', 'log-quota': '32MiB' }, {}, '/')).toEqual({ dataDir: '/d', quotaBytes: 32 * 1024 ** 2, totalBytes: undefined, retentionMs: undefined });
  });
});

import { Registrations } from '../../src/host/registrations';
import { VirtualClock } from '../support/virtual-time';

describe('Registrations', () => {
  it('accepts the latest registration with its token, from the key that registered it', () => {
    const registrations = new Registrations(100);
    const { registrationId, token } = registrations.issue('env-1', 'AKID1');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(registrations.check('env-1', registrationId, token, 'AKID1')).toBe('ok');
  });

  it('refuses a wrong token, another environment, another key, an unknown registration', () => {
    const registrations = new Registrations(100);
    const one = registrations.issue('env-1', 'AKID1');
    const two = registrations.issue('env-2', 'AKID1');
    expect(registrations.check('env-1', one.registrationId, `${one.token}x`, 'AKID1')).toBe('unauthorized');
    expect(registrations.check('env-2', one.registrationId, one.token, 'AKID1')).toBe('unauthorized');
    expect(registrations.check('env-1', two.registrationId, two.token, 'AKID1')).toBe('unauthorized');
    expect(registrations.check('env-1', one.registrationId, one.token, 'AKID2')).toBe('unauthorized');
    expect(registrations.check('env-1', 'reg-00000000-0000-0000-0000-000000000000', one.token, 'AKID1')).toBe('unauthorized');
  });

  it('answers stale for a superseded registration (the executor re-registers), until it is forgotten', () => {
    const registrations = new Registrations(100);
    const first = registrations.issue('env-1', 'AKID1');
    const second = registrations.issue('env-1', 'AKID1');
    expect(registrations.check('env-1', first.registrationId, first.token, 'AKID1')).toBe('stale');
    expect(registrations.check('env-1', second.registrationId, second.token, 'AKID1')).toBe('ok');
    for (let i = 0; i < 5; i++) registrations.issue('env-1', 'AKID1');
    expect(registrations.check('env-1', first.registrationId, first.token, 'AKID1')).toBe('unauthorized');
    registrations.forget('env-1');
    expect(registrations.environments()).toEqual([]);
  });

  it('lists environments oldest first (by its scheduler\'s clock) and stays within its bound', async () => {
    const clock = new VirtualClock(1_000);
    const registrations = new Registrations(3, clock);
    registrations.issue('a', 'K');
    await clock.advance(1_000);
    registrations.issue('b', 'K');
    await clock.advance(1_000);
    registrations.issue('c', 'K');
    await clock.advance(1_000);
    registrations.issue('d', 'K');
    expect(registrations.environments()).toEqual([
      ['b', 2_000],
      ['c', 3_000],
      ['d', 4_000],
    ]);
  });
});

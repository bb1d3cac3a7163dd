/**
 * Download tickets on the host's clock (virtual time): good once, for 60 s, for their process only;
 * dropped when their token is revoked or the host stops; random, never twice the same. With tokens, and a
 * store two hosts share: redeemed on either host while it accepts the very token that asked, on neither
 * once a reload on either host revoked or changed that token.
 */
import { LogTickets, TICKET_TTL_MS } from '../../../src/host/api/log-tickets';
import { MemoryTicketStore } from '../../../src/host/api/memory-ticket-store';
import type { OperatorCaller, OperatorTokenSpec } from '../../../src/host/api/operator-tokens';
import { OperatorTokens } from '../../../src/host/api/operator-tokens';
import { VirtualClock } from '../../support/virtual-time';

const watcher: OperatorCaller = { name: 'watcher', role: 'view', environments: new Set(['env-1']) };
const ops: OperatorCaller = { name: 'ops', role: 'operate', environments: undefined };

describe('LogTickets', () => {
  it('redeems a ticket once, for the caller that asked, within 60 s', async () => {
    const clock = new VirtualClock(1_000);
    const tickets = new LogTickets(clock);
    const { ticket, expiresAt } = await tickets.issue(watcher, 'env-1', 'p-1');
    expect(expiresAt).toBe(1_000 + TICKET_TTL_MS);
    expect(ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await clock.advance(TICKET_TTL_MS - 1);
    expect(await tickets.redeem(ticket, 'env-1', 'p-1')).toBe(watcher);
    expect(await tickets.redeem(ticket, 'env-1', 'p-1')).toBeUndefined();
    expect(tickets.size).toBe(0);
  });

  it('lets a ticket expire after 60 s, on the scheduler', async () => {
    const clock = new VirtualClock();
    const tickets = new LogTickets(clock);
    const { ticket } = await tickets.issue(watcher, 'env-1', 'p-1');
    await clock.advance(TICKET_TTL_MS);
    expect(tickets.size).toBe(0);
    expect(await tickets.redeem(ticket, 'env-1', 'p-1')).toBeUndefined();
  });

  it('uses a ticket up when it is tried on another process', async () => {
    const tickets = new LogTickets(new VirtualClock());
    const { ticket } = await tickets.issue(watcher, 'env-1', 'p-1');
    expect(await tickets.redeem(ticket, 'env-1', 'p-2')).toBeUndefined();
    expect(await tickets.redeem(ticket, 'env-1', 'p-1')).toBeUndefined();
  });

  it('drops the tickets of revoked tokens, and every ticket when the host stops', async () => {
    const clock = new VirtualClock();
    const tickets = new LogTickets(clock);
    const mine = (await tickets.issue(watcher, 'env-1', 'p-1')).ticket;
    const theirs = (await tickets.issue(ops, 'env-1', 'p-1')).ticket;
    expect(mine).not.toBe(theirs);
    await tickets.revoke(new Set(['watcher']));
    expect(await tickets.redeem(mine, 'env-1', 'p-1')).toBeUndefined();
    await tickets.issue(ops, 'env-1', 'p-2');
    tickets.close();
    expect(tickets.size).toBe(0);
    expect(await tickets.redeem(theirs, 'env-1', 'p-1')).toBeUndefined();
    expect(clock.actions).toHaveLength(0);
  });

  describe('with tokens, on a store two hosts share', () => {
    const WATCHER: OperatorTokenSpec = { name: 'watcher', role: 'view', environments: ['env-1'], secret: 'watcher-token-0123456789' };
    const OPS: OperatorTokenSpec = { name: 'ops', role: 'operate', secret: 'ops-token-0123456789' };
    const callerOf = (tokens: OperatorTokens, spec: OperatorTokenSpec): OperatorCaller => {
      const caller = tokens.authenticate(`Bearer ${spec.secret}`);
      if (caller === undefined) throw new Error(`${spec.name} is not accepted`);
      return caller;
    };
    /** Two hosts on one store, each with its own copy of the same tokens. */
    function twoHosts(): { readonly store: MemoryTicketStore; readonly a: { tokens: OperatorTokens; tickets: LogTickets }; readonly b: { tokens: OperatorTokens; tickets: LogTickets } } {
      const clock = new VirtualClock();
      const store = new MemoryTicketStore(clock);
      const host = (): { tokens: OperatorTokens; tickets: LogTickets } => {
        const tokens = new OperatorTokens([WATCHER, OPS]);
        return { tokens, tickets: new LogTickets(clock, { store, tokens }) };
      };
      return { store, a: host(), b: host() };
    }

    it('redeems a ticket made on one host on the other, once, for the caller that asked', async () => {
      const { store, a, b } = twoHosts();
      const { ticket } = await a.tickets.issue(callerOf(a.tokens, WATCHER), 'env-1', 'p-1');
      expect(await b.tickets.redeem(ticket, 'env-1', 'p-1')).toEqual({ name: 'watcher', role: 'view', environments: new Set(['env-1']) });
      expect(await a.tickets.redeem(ticket, 'env-1', 'p-1')).toBeUndefined();
      expect(store.size).toBe(0);
      store.close();
    });

    it('refuses on the other host a ticket whose token a reload there revoked, or whose role or secret it changed', async () => {
      const { store, a, b } = twoHosts();
      const watched = await a.tickets.issue(callerOf(a.tokens, WATCHER), 'env-1', 'p-1');
      const operated = await a.tickets.issue(callerOf(a.tokens, OPS), 'env-1', 'p-1');
      const kept = await a.tickets.issue(callerOf(a.tokens, WATCHER), 'env-1', 'p-2');
      // b's reload: watcher's secret changes, ops becomes a view token.
      expect(b.tokens.replaceWith(new OperatorTokens([{ ...WATCHER, secret: 'watcher-token-rotated-0123' }, { ...OPS, role: 'view' }]))).toEqual(new Set(['watcher', 'ops']));
      expect(await b.tickets.redeem(watched.ticket, 'env-1', 'p-1')).toBeUndefined();
      expect(await b.tickets.redeem(operated.ticket, 'env-1', 'p-1')).toBeUndefined();
      // b reloads back: the ticket it did not try is good again (a accepted the token all along).
      b.tokens.replaceWith(new OperatorTokens([WATCHER, OPS]));
      expect((await b.tickets.redeem(kept.ticket, 'env-1', 'p-2'))?.name).toBe('watcher');
      store.close();
    });

    it('takes out of the store the tickets a host made when a reload there revokes their token: the other host refuses them too', async () => {
      const { store, a, b } = twoHosts();
      const stopRevoking = a.tokens.onRevoke((names) => void a.tickets.revoke(names));
      const watched = await a.tickets.issue(callerOf(a.tokens, WATCHER), 'env-1', 'p-1');
      const operated = await a.tickets.issue(callerOf(a.tokens, OPS), 'env-1', 'p-1');
      a.tokens.replaceWith(new OperatorTokens([OPS]));
      expect(store.size).toBe(1);
      expect(await b.tickets.redeem(watched.ticket, 'env-1', 'p-1')).toBeUndefined();
      expect((await b.tickets.redeem(operated.ticket, 'env-1', 'p-1'))?.name).toBe('ops');
      stopRevoking();
      store.close();
    });

    it('refuses a ticket that carries no seal (made by a host without tokens)', async () => {
      const { store, b } = twoHosts();
      const { ticket } = await new LogTickets(new VirtualClock(), { store }).issue(watcher, 'env-1', 'p-1');
      expect(await b.tickets.redeem(ticket, 'env-1', 'p-1')).toBeUndefined();
      store.close();
    });
  });
});

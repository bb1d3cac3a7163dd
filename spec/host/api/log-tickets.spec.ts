/**
 * Download tickets on the host's clock (virtual time): good once, for 60 s, for their process only;
 * dropped when their token is revoked or the host stops; random, never twice the same.
 */
import { LogTickets, TICKET_TTL_MS } from '../../../src/host/api/log-tickets';
import type { OperatorCaller } from '../../../src/host/api/operator-tokens';
import { VirtualClock } from '../../support/virtual-time';

const watcher: OperatorCaller = { name: 'watcher', role: 'view', environments: new Set(['env-1']) };
const ops: OperatorCaller = { name: 'ops', role: 'operate', environments: undefined };

describe('LogTickets', () => {
  it('redeems a ticket once, for the caller that asked, within 60 s', async () => {
    const clock = new VirtualClock(1_000);
    const tickets = new LogTickets(clock);
    const { ticket, expiresAt } = tickets.issue(watcher, 'env-1', 'p-1');
    expect(expiresAt).toBe(1_000 + TICKET_TTL_MS);
    expect(ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await clock.advance(TICKET_TTL_MS - 1);
    expect(tickets.redeem(ticket, 'env-1', 'p-1')).toBe(watcher);
    expect(tickets.redeem(ticket, 'env-1', 'p-1')).toBeUndefined();
    expect(tickets.size).toBe(0);
  });

  it('lets a ticket expire after 60 s, on the scheduler', async () => {
    const clock = new VirtualClock();
    const tickets = new LogTickets(clock);
    const { ticket } = tickets.issue(watcher, 'env-1', 'p-1');
    await clock.advance(TICKET_TTL_MS);
    expect(tickets.size).toBe(0);
    expect(tickets.redeem(ticket, 'env-1', 'p-1')).toBeUndefined();
  });

  it('uses a ticket up when it is tried on another process', () => {
    const tickets = new LogTickets(new VirtualClock());
    const { ticket } = tickets.issue(watcher, 'env-1', 'p-1');
    expect(tickets.redeem(ticket, 'env-1', 'p-2')).toBeUndefined();
    expect(tickets.redeem(ticket, 'env-1', 'p-1')).toBeUndefined();
  });

  it('drops the tickets of revoked tokens, and every ticket when the host stops', () => {
    const clock = new VirtualClock();
    const tickets = new LogTickets(clock);
    const mine = tickets.issue(watcher, 'env-1', 'p-1').ticket;
    const theirs = tickets.issue(ops, 'env-1', 'p-1').ticket;
    expect(mine).not.toBe(theirs);
    tickets.revoke(new Set(['watcher']));
    expect(tickets.redeem(mine, 'env-1', 'p-1')).toBeUndefined();
    tickets.issue(ops, 'env-1', 'p-2');
    tickets.close();
    expect(tickets.size).toBe(0);
    expect(tickets.redeem(theirs, 'env-1', 'p-1')).toBeUndefined();
    expect(clock.actions).toHaveLength(0);
  });
});

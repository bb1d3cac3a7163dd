/**
 * How long a request's body may take to arrive, in place of Node's `server.requestTimeout` (which bounds
 * the whole request, headers and body, and has no exemption): every request gets {@link BODY_DEADLINE_MS}
 * from its head to the end of its body (a slow client, a slowloris, cannot hold a connection open); a route
 * that streams a body of any size (an upload, once authenticated and checked) lifts it and bounds the
 * client's pauses itself. Past the deadline the client gets 408 with `Connection: close` and the socket is
 * closed, as Node's own timeout does. Timers run on the host's scheduler.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SchedulerLike, Subscription } from 'rxjs';

/** From a request's head to the end of its body: 15 s (what `server.requestTimeout` was). */
export const BODY_DEADLINE_MS = 15_000;

const deadlines = new WeakMap<IncomingMessage, Subscription>();

/**
 * Starts `req`'s deadline (nothing when its body already ended); it ends with the body, with the answer
 * (what is left of a body after its answer is drained by Node, or by the lingering close of a refused one,
 * bounded in bytes: `./api/json-body`), or with the connection.
 */
export function startBodyDeadline(req: IncomingMessage, res: ServerResponse, scheduler: SchedulerLike, ms: number = BODY_DEADLINE_MS): void {
  if (req.complete) return;
  const timer = scheduler.schedule(() => {
    deadlines.delete(req);
    if (req.complete) return;
    if (!res.headersSent) res.writeHead(408, { connection: 'close', 'content-length': '0' }).end();
    req.socket.destroy();
  }, ms);
  deadlines.set(req, timer);
  const done = (): void => liftBodyDeadline(req);
  req.once('end', done);
  req.once('close', done);
  res.once('finish', done);
  res.once('close', done);
}

/** Lifts `req`'s deadline: its route bounds the body itself from now on. Idempotent. */
export function liftBodyDeadline(req: IncomingMessage): void {
  deadlines.get(req)?.unsubscribe();
  deadlines.delete(req);
}

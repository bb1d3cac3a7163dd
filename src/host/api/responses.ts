/** JSON answers of the operator API: every one names the host instance and is never cached. */
import type { ServerResponse } from 'node:http';
import { HOST_INSTANCE_HEADER } from '../../wire/operator-api';

/** Writes `body` as JSON with `status` and ends the response. */
export function sendApiJson(res: ServerResponse, hostInstance: string, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    [HOST_INSTANCE_HEADER]: hostInstance,
    ...headers,
  });
  res.end(text);
}

/** Ends the response with `status` and no body. */
export function sendEmpty(res: ServerResponse, hostInstance: string, status: number): void {
  res.writeHead(status, { 'cache-control': 'no-store', [HOST_INSTANCE_HEADER]: hostInstance });
  res.end();
}

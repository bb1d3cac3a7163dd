/** Placeholder until the Redis adapters land (replaced in the same change). */
import type { SharedStateStore } from '../cluster-state';
import type { LogStore } from '../log-store';
export interface SharedStores { readonly clusterId: string; readonly state: SharedStateStore; readonly logs: LogStore; close(): Promise<void> }
export function openRedisStores(_o: { url: string; prefix?: string; log: (line: string) => void }): Promise<SharedStores> { throw new Error('x'); }

/** Reading a replaying Observable's value as it is now, for the operator API's answers. */
import type { Observable } from 'rxjs';
import type { Environment } from '../../environment/environment';
import type { ProcessSummary } from '../../exec/process-table';

/** The current value of a replaying Observable (the environment's process list), read synchronously; `fallback` when it has none yet. */
export function current<T>(source$: Observable<T>, fallback: T): T {
  let value = fallback;
  source$.subscribe((v) => (value = v)).unsubscribe();
  return value;
}

/** The environment's process list as it is now. */
export const listed = (environment: Environment): readonly ProcessSummary[] => current(environment.processes$, []);

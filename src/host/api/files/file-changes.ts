/**
 * `GET …/files/changes?path=`: Server-Sent Events of a directory's changes, `event: change` with a
 * `FileChange` as data, from the shared poller of that directory (`./change-watches`: poll and diff every
 * 2 s); the answer's head goes out once the first poll took the directory. Opened within the host's event stream limits (`../sse`), pinged like the others, ended when the host
 * stops or the caller's token is revoked.
 */
import { ApiProblem } from '../problem';
import type { RouteContext } from '../router';
import type { FilesContext } from './files-context';
import { allowedPath, callsOf, pathParam } from './files-context';

/** The SSE frame of one change. */
const changeFrame = (data: unknown): Buffer => Buffer.from(`event: change\ndata: ${JSON.stringify(data)}\n\n`, 'utf8');

/** `GET …/files/changes` (see the module's doc): 409 `NOT_A_DIRECTORY` for a file, 404 for a missing path. */
export async function streamChanges(files: FilesContext, route: RouteContext): Promise<void> {
  const requested = pathParam(route.query);
  const calls = await callsOf(files, route);
  const path = await allowedPath(files, calls, requested);
  const meta = await calls.metadata(path);
  if (!meta.isDirectory) throw new ApiProblem(409, 'NOT_A_DIRECTORY', `${path.native} is not a directory`);
  if (route.req.method === 'HEAD') {
    files.api.hub.open(route.res, route.caller.name);
    return;
  }
  // The answer's head goes out once the first poll took the directory: every change after it is reported.
  const sink: { write?: (frame: Buffer) => void } = {};
  const watch = files.watches.watch(calls.environmentId, path, (change) => sink.write?.(changeFrame(change)));
  try {
    await watch.ready;
    if (route.res.destroyed) throw new ApiProblem(499, 'CLOSED', 'the client went away');
    const stream = files.api.hub.open(route.res, route.caller.name);
    sink.write = (frame) => void stream.write(frame);
    stream.onEnd(watch.stop);
  } catch (error: unknown) {
    watch.stop();
    throw error;
  }
}

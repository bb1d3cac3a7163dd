/**
 * `exec-rx cp [--parallel N] SRC DST`: files between an environment (`ENV:/abs/path`) and here (a local
 * path, or `-` for stdin/stdout), through the host's file routes, as `docker cp` and `kubectl cp` do:
 * directories recursively, several files in flight, bytes only. A local file is written beside its
 * target and renamed into place, so a failed copy leaves no half file under the name (the host does the
 * same on its side).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { asyncScheduler } from 'rxjs';
import { HostClient } from '../../client/host-client';
import type { HostFiles } from '../../client/host-files';
import type { CopyEnd, CpOptions, RemotePath } from '../files-args';
import { EXIT_BROKEN_PIPE, EXIT_ERROR, EXIT_PARTIAL } from '../exit-codes';
import type { CliIo } from '../io';
import { CopyProgress } from './copy-progress';
import type { CopyJob, CopyPlan } from './cp-plan';
import { into, localBase, localIsDirectory, planDownload, planUpload, remoteBase, remoteIsDirectory, remoteJoin, remoteParent } from './cp-plan';
import { describeHostError } from './host-errors';

/** Our stdout's reader went away while a file was written to it. */
class BrokenPipe extends Error {}

/**
 * Copies as `options` says and resolves with the exit status: 0 when every file was copied; 23
 * (`EXIT_PARTIAL`) when some were and some were not (a line each on stderr, and a last line counting
 * them); 1 when nothing could be copied (the source missing, the host refusing or unreachable: one line
 * says why); 141 when stdout's reader went away. Never rejects.
 */
export async function cpCommand(options: CpOptions, io: CliIo): Promise<number> {
  const { url, token } = options.access;
  const client = new HostClient({ url: options.access.urls ?? url, token });
  const stderr: Writable & { readonly isTTY?: boolean } = io.stderr;
  const progress = new CopyProgress({ write: (text) => stderr.write(text), isTTY: stderr.isTTY === true }, io.scheduler ?? asyncScheduler);
  const describe = (error: unknown): string => describeHostError(error, url);
  try {
    const remote = options.source.kind === 'remote' ? options.source : options.destination;
    if (remote.kind !== 'remote') throw new Error('cp: no remote side');
    const files = client.files(remote.environmentId);
    const plan = options.source.kind === 'remote' ? await downloadPlan(files, options.source, options.destination, io) : await uploadPlan(files, options.source, remote, io);
    for (const note of plan.notes) progress.say(note);
    for (const failure of plan.failures) {
      progress.filesFailed += 1;
      progress.say(`cannot copy ${failure}`);
    }
    for (const job of plan.jobs) progress.planned(job.size);
    progress.start();
    let broken = false;
    await pool(plan.jobs, options.parallel, async (job) => {
      try {
        await job.run((bytes) => progress.moved(bytes));
        progress.filesDone += 1;
      } catch (error: unknown) {
        if (error instanceof BrokenPipe) broken = true;
        progress.filesFailed += 1;
        if (!broken) progress.say(`cannot copy ${job.label}: ${describe(error)}`);
      }
    });
    progress.stop();
    if (broken) return EXIT_BROKEN_PIPE;
    const failed = progress.filesFailed;
    if (failed === 0) return 0;
    const copied = progress.filesDone;
    progress.say(`${failed} of ${copied + failed} files not copied (${copied} copied)`);
    return copied > 0 ? EXIT_PARTIAL : EXIT_ERROR;
  } catch (error: unknown) {
    progress.stop();
    progress.say(describe(error));
    return EXIT_ERROR;
  } finally {
    progress.stop();
    await client.close();
  }
}

/** Runs `work` on each item, at most `parallel` at once. */
async function pool<T>(items: readonly T[], parallel: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let index = next++; index < items.length; index = next++) {
      const item = items[index];
      if (item !== undefined) await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, worker));
}

/** An environment's file or directory to here (a local path, or stdout for one file). */
async function downloadPlan(files: HostFiles, source: RemotePath, destination: CopyEnd, io: CliIo): Promise<CopyPlan> {
  const entry = await files.stat(source.path);
  const label = `${source.environmentId}:${source.path}`;
  if (destination.kind === 'stdio') {
    if (entry.type !== 'file') throw new Error(`cp: ${label} is a directory: - takes one file`);
    return { jobs: [{ label, size: entry.size, run: (moved) => toStdout(files, source.path, io.stdout, moved) }], failures: [], notes: [] };
  }
  if (destination.kind !== 'local') throw new Error('cp: the destination must be local');
  const target = into(await localIsDirectory(destination.path), destination.path, entry.name, join);
  const download = (remote: string, local: string): CopyJob => ({
    label: `${source.environmentId}:${remote}`,
    size: undefined,
    run: (moved) => toLocalFile(files, remote, local, moved),
  });
  if (entry.type === 'directory') return planDownload(files, source.path, target, download);
  if (entry.type !== 'file') throw new Error(`cp: ${label} is neither a file nor a directory`);
  await mkdir(dirname(target), { recursive: true });
  return { jobs: [{ ...download(source.path, target), size: entry.size }], failures: [], notes: [] };
}

/** A local file or directory, or stdin, to an environment. */
async function uploadPlan(files: HostFiles, source: CopyEnd, destination: RemotePath, io: CliIo): Promise<CopyPlan> {
  const upload = (local: string, remote: string, size: number | undefined): CopyJob => ({
    label: local,
    size,
    run: async (moved) => {
      let sent = 0;
      const onProgress = (bytes: number): void => {
        moved(bytes - sent);
        sent = bytes;
      };
      await files.write(remote, chunksOf(local === '-' ? io.stdin : createReadStream(local)), { onProgress });
    },
  });
  const parent = remoteParent(destination.path);
  if (source.kind === 'stdio') {
    if (parent !== undefined) await files.mkdir(parent, { parents: true });
    return { jobs: [{ ...upload('-', destination.path, undefined), label: 'stdin' }], failures: [], notes: [] };
  }
  if (source.kind !== 'local') throw new Error('cp: the source must be local');
  const info = await stat(source.path);
  const target = into(await remoteIsDirectory(files, destination.path), destination.path, localBase(source.path), remoteJoin);
  if (info.isDirectory()) return planUpload(files, source.path, target, upload);
  if (!info.isFile()) throw new Error(`cp: ${source.path} is neither a file nor a directory`);
  const targetParent = remoteParent(target);
  if (targetParent !== undefined) await files.mkdir(targetParent, { parents: true });
  return { jobs: [upload(source.path, target, info.size)], failures: [], notes: [] };
}

/** A Node stream's chunks as bytes. */
async function* chunksOf(stream: Readable): AsyncIterable<Uint8Array> {
  for await (const chunk of stream) {
    if (chunk instanceof Uint8Array) yield chunk;
    else yield new TextEncoder().encode(String(chunk));
  }
}

/** A web stream's chunks, counted; cancelled when the consumer stops early. */
async function* counted(stream: ReadableStream<Uint8Array>, moved: (bytes: number) => void): AsyncIterable<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) return;
      moved(next.value.byteLength);
      yield next.value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** One remote file to `local`, written beside it and renamed into place (a failure removes the part). */
async function toLocalFile(files: HostFiles, remote: string, local: string, moved: (bytes: number) => void): Promise<void> {
  const part = join(dirname(local), `.${remoteBase(local)}.exec-rx-cp-${globalThis.crypto.randomUUID().slice(0, 8)}`);
  try {
    await pipeline(counted(files.read(remote), moved), createWriteStream(part));
    await rename(part, local);
  } catch (error: unknown) {
    await rm(part, { force: true });
    throw error;
  }
}

/** One remote file to our stdout, no faster than it takes it; {@link BrokenPipe} when its reader went away. */
async function toStdout(files: HostFiles, remote: string, stdout: Writable, moved: (bytes: number) => void): Promise<void> {
  let failed: unknown;
  const onError = (error: unknown): void => {
    failed = error;
  };
  stdout.on('error', onError);
  try {
    for await (const chunk of counted(files.read(remote), moved)) {
      if (failed !== undefined) break;
      if (!stdout.write(chunk)) await new Promise<void>((resolve) => {
        const done = (): void => {
          stdout.off('drain', done);
          stdout.off('error', done);
          resolve();
        };
        stdout.on('drain', done);
        stdout.on('error', done);
      });
    }
    if (failed !== undefined) throw new BrokenPipe('stdout closed');
  } finally {
    stdout.off('error', onError);
  }
}

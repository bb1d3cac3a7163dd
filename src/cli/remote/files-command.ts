/**
 * `exec-rx files ls|stat|rm|mkdir ENV:/path...`: an environment's files through the host, one call per
 * path: `ls` like `ls -l`, `stat` one entry's fields, `rm` (`-r`), `mkdir` (`-p`).
 */
import { HostClient } from '../../client/host-client';
import type { FileEntry } from '../../wire/files-api';
import type { FilesOptions, RemotePath } from '../files-args';
import { EXIT_ERROR } from '../exit-codes';
import type { CliIo } from '../io';
import { describeHostError } from './host-errors';

/** An entry's line as `ls -l` would give it: `TYPE SIZE MODIFIED NAME` (`-` a file, `d` a directory, `l` a symlink, `?` neither). */
export function lsLine(entry: FileEntry, sizeWidth: number, name: string = entry.name): string {
  const type = entry.isSymlink ? 'l' : entry.type === 'file' ? '-' : entry.type === 'directory' ? 'd' : '?';
  const modified = entry.modifiedAt === null ? '-'.padEnd(16) : entry.modifiedAt.slice(0, 16).replace('T', ' ');
  return `${type} ${String(entry.size).padStart(sizeWidth)} ${modified} ${name}`;
}

/** `ls` of several entries: the sizes aligned. */
export function lsLines(entries: readonly FileEntry[], nameOf: (entry: FileEntry) => string = (entry) => entry.name): string {
  const width = Math.max(1, ...entries.map((entry) => String(entry.size).length));
  return entries.map((entry) => `${lsLine(entry, width, nameOf(entry))}\n`).join('');
}

/** `stat`'s lines of one entry. */
export function statLines(entry: FileEntry): string {
  return [
    `path: ${entry.path}`,
    `type: ${entry.type}${entry.isSymlink ? ' (a symlink: the rest is of its target)' : ''}`,
    `size: ${entry.size}`,
    `modified: ${entry.modifiedAt ?? '-'}`,
    `etag: ${entry.etag ?? '-'}`,
  ].map((line) => `${line}\n`).join('');
}

/**
 * Runs the action on each path in turn and resolves 0 when every one succeeded, else 1 after a line
 * per path that failed (the others are still done). Never rejects.
 */
export async function filesCommand(options: FilesOptions, io: CliIo): Promise<number> {
  const { url, token } = options.access;
  const client = new HostClient({ url: options.access.urls ?? url, token });
  let status = 0;
  const documents: unknown[] = [];
  try {
    for (const target of options.targets) {
      try {
        const document = await act(client, options, target, io);
        if (document !== undefined) documents.push(document);
      } catch (error: unknown) {
        io.stderr.write(`exec-rx: ${target.environmentId}:${target.path}: ${describeHostError(error, url)}\n`);
        status = EXIT_ERROR;
      }
    }
    if ('json' in options && options.json) io.stdout.write(`${JSON.stringify(documents.length === 1 ? documents[0] : documents, null, 2)}\n`);
    return status;
  } finally {
    await client.close();
  }
}

/** One path's action; with `--json`, the document to print instead of the lines. */
async function act(client: HostClient, options: FilesOptions, target: RemotePath, io: CliIo): Promise<unknown> {
  const files = client.files(target.environmentId);
  const heading = options.targets.length > 1 ? `${target.environmentId}:${target.path}:\n` : '';
  switch (options.action) {
    case 'stat': {
      const entry = await files.stat(target.path);
      if (options.json) return entry;
      io.stdout.write(`${heading}${statLines(entry)}`);
      return undefined;
    }
    case 'ls': {
      const entry = await files.stat(target.path);
      if (entry.type !== 'directory') {
        if (options.json) return entry;
        io.stdout.write(lsLines([entry], (e) => e.path));
        return undefined;
      }
      const listing = await files.list(target.path);
      if (listing.truncated) io.stderr.write(`exec-rx: ${target.environmentId}:${target.path}: the host listed only part of it (${listing.entries.length} entries)\n`);
      if (options.json) return listing;
      io.stdout.write(`${heading}${lsLines(listing.entries)}`);
      return undefined;
    }
    case 'rm':
      await files.remove(target.path, { recursive: options.recursive });
      return undefined;
    case 'mkdir':
      await files.mkdir(target.path, { parents: options.parents });
      return undefined;
  }
}

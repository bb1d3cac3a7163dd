import { pathToFileURL } from 'node:url';

/** A native absolute path becomes a `file://` URI (the executor refuses native paths); a URI is kept. */
export const toFileUri = (pathOrUri: string): string => (pathOrUri.startsWith('file:') ? pathOrUri : pathToFileURL(pathOrUri).href);

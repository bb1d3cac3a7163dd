/**
 * What `HostHttp` hands its users, as documented interfaces: the preview routes' answers, checked against
 * the wire codecs of `wire/http-api` when they arrive (each codec's type is assignable to its interface
 * here: `HttpTypesFit` fails to compile when they part).
 */
import type * as wire from '../wire/http-api';

/** Who may open a port's preview: `private`, tokens with `operate` and links; `public`, anyone (rate-limited). */
export type PreviewSharing = 'private' | 'public';

/** A signed link to one port's preview (`HostHttp.previewLink`). */
export interface PreviewLink {
  /** The environment. */
  readonly environmentId: string;
  /** The port in the environment. */
  readonly port: number;
  /** The path form on the preview listener, with the link in its query (exchanged for a cookie on first use). */
  readonly pathUrl: string;
  /** The host-name form, when the host has a preview domain and the environment id is a DNS label; else null. */
  readonly hostUrl: string | null;
  /** When the link, and the cookie it is exchanged for, stop opening anything (ISO 8601). */
  readonly expiresAt: string;
}

/** One port with a sharing level other than the default (private). */
export interface PreviewPort {
  /** The port in the environment. */
  readonly port: number;
  /** Its sharing level. */
  readonly sharing: PreviewSharing;
}

/** The ports of an environment an operator made public (`HostHttp.previews`). */
export interface PreviewList {
  /** The environment. */
  readonly environmentId: string;
  /** Its public ports. */
  readonly previews: readonly PreviewPort[];
}

/** Compiles only when the wire type `T` holds. */
type Holds<T extends true> = T;

/** The wire codecs' types fit the interfaces above (a compile-time check, never a value). @internal */
export type HttpTypesFit = [
  Holds<wire.PreviewLink extends PreviewLink ? true : false>,
  Holds<wire.PreviewList extends PreviewList ? true : false>,
  Holds<wire.PreviewPort extends PreviewPort ? true : false>,
  Holds<wire.PreviewSharing extends PreviewSharing ? true : false>,
];

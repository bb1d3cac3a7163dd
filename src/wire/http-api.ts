/**
 * The shapes of the operator API's HTTP routes (`/api/v1/environments/{environmentId}/previews…` and
 * `…/fetch`): a preview link, a port's sharing level, and the request a program sends through the fetch
 * route (its answer is the target's body, its status and headers in the `exec-rx-fetch-*` headers).
 */
import * as t from 'io-ts';
import { struct } from './struct';

/** Who may open a port's preview: `private`, tokens with `operate` and links; `public`, anyone (rate-limited). */
export const PreviewSharing = t.keyof({ private: null, public: null }, 'PreviewSharing');
/** Who may open a port's preview. */
export type PreviewSharing = t.TypeOf<typeof PreviewSharing>;

/** `POST …/previews/{port}/links`: a signed link to one port, in each form the host serves. */
export const PreviewLink = struct('PreviewLink', {
  environmentId: t.string,
  port: t.number,
  /** The path form on the preview listener, with the link in its query (exchanged for a cookie on first use). */
  pathUrl: t.string,
  /** The host-name form, when the host has a preview domain and the environment id is a DNS label; else null. */
  hostUrl: t.union([t.string, t.null]),
  /** When the link, and the cookie it is exchanged for, stop opening anything (ISO 8601). */
  expiresAt: t.string,
});
/** A signed preview link. */
export type PreviewLink = t.TypeOf<typeof PreviewLink>;

/** One port whose sharing level is not the default (private). */
export const PreviewPort = struct('PreviewPort', { port: t.number, sharing: PreviewSharing });
/** One port's sharing level. */
export type PreviewPort = t.TypeOf<typeof PreviewPort>;

/** `GET …/previews`: the ports of an environment an operator made public (the rest are private). */
export const PreviewList = struct('PreviewList', { environmentId: t.string, previews: t.array(PreviewPort) });
/** The ports of an environment with a sharing level. */
export type PreviewList = t.TypeOf<typeof PreviewList>;

/** `PUT …/previews/{port}`: a port's new sharing level. */
export const SharingChange = struct('SharingChange', { sharing: PreviewSharing });
/** A port's new sharing level. */
export type SharingChange = t.TypeOf<typeof SharingChange>;

/** How the fetch route treats a redirect: follow it (each hop checked), answer it, or fail. */
export const FetchRedirect = t.keyof({ follow: null, manual: null, error: null }, 'FetchRedirect');
/** How the fetch route treats a redirect. */
export type FetchRedirect = t.TypeOf<typeof FetchRedirect>;

/** `POST …/fetch`: the request the environment makes (its body base64, at most the host's limit). */
export const FetchEnvelope = struct(
  'FetchEnvelope',
  { url: t.string },
  {
    method: t.string,
    headers: t.array(t.tuple([t.string, t.string])),
    bodyBase64: t.string,
    redirect: FetchRedirect,
    timeoutMs: t.number,
  },
);
/** The request the environment makes. */
export type FetchEnvelope = t.TypeOf<typeof FetchEnvelope>;

/** The answer headers of the fetch route that carry the target's answer: its status, its headers (base64url JSON `[name, value][]`), the final url, whether it was redirected. */
export const FETCH_STATUS_HEADER = 'exec-rx-fetch-status';
/** See {@link FETCH_STATUS_HEADER}. */
export const FETCH_HEADERS_HEADER = 'exec-rx-fetch-headers';
/** See {@link FETCH_STATUS_HEADER}. */
export const FETCH_URL_HEADER = 'exec-rx-fetch-url';
/** See {@link FETCH_STATUS_HEADER}. */
export const FETCH_REDIRECTED_HEADER = 'exec-rx-fetch-redirected';

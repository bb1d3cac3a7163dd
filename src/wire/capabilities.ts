import * as t from 'io-ts';
import { SandboxContext } from './sandbox';
import { struct } from './struct';

// docs/protocol.md#environment-config-and-capabilities: capability discovery, typed loosely (the results
// are passed through as they come).

/** A root to discover capabilities under: a client-chosen `id` and a `file://` URI. */
export const CapabilityRoot = struct('CapabilityRoot', { id: t.string, path: t.string }, { sandbox: t.union([SandboxContext, t.null]) });
/** A root to discover capabilities under. */
export type CapabilityRoot = t.TypeOf<typeof CapabilityRoot>;

/** `capabilityRoots/discoverV1` params. */
export const CapabilityRootsDiscoverV1Params = struct('CapabilityRootsDiscoverV1Params', { roots: t.array(CapabilityRoot) });
/** `capabilityRoots/discoverV1` params. */
export type CapabilityRootsDiscoverV1Params = t.TypeOf<typeof CapabilityRootsDiscoverV1Params>;

/** `capabilityRoots/discoverV1` result: one loose object per root (`{id, path, plugin, skills, namespaceManifests, warnings, error}`). */
export const CapabilityRootsDiscoverV1Response = t.intersection(
  [t.type({ roots: t.array(t.UnknownRecord) }), t.UnknownRecord],
  'CapabilityRootsDiscoverV1Response',
);
/** `capabilityRoots/discoverV1` result. */
export type CapabilityRootsDiscoverV1Response = t.TypeOf<typeof CapabilityRootsDiscoverV1Response>;

/** `capabilities/discoverV2` params: a `cwd` URI plus further fields passed through as given. */
export const CapabilitiesDiscoverV2Params = t.intersection([t.type({ cwd: t.string }), t.UnknownRecord], 'CapabilitiesDiscoverV2Params');
/** `capabilities/discoverV2` params. */
export type CapabilitiesDiscoverV2Params = t.TypeOf<typeof CapabilitiesDiscoverV2Params>;

/** `capabilities/discoverV2` result, e.g. `{"plugins":[],"skills":[],"warnings":[]}`; any object is accepted. */
export const CapabilitiesDiscoverV2Response = t.intersection(
  [t.UnknownRecord, t.partial({ plugins: t.array(t.unknown), skills: t.array(t.unknown), warnings: t.array(t.unknown) })],
  'CapabilitiesDiscoverV2Response',
);
/** `capabilities/discoverV2` result. */
export type CapabilitiesDiscoverV2Response = t.TypeOf<typeof CapabilitiesDiscoverV2Response>;

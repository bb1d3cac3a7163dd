/** The bytes of a frame the host's binary framing made (`host/api/binary-frames.ts`), for the client's specs. */
import type { WireFrame } from '../../src/host/api/event-framing';

/** A frame's bytes, its parts joined. */
export const bytesOf = (frame: WireFrame): Uint8Array => (frame instanceof Uint8Array ? new Uint8Array(frame) : Buffer.concat([frame.head, frame.body]));

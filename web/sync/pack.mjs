// Packs: many changes sealed together as one stream message. A device sending a backlog (a first sync,
// an archive queued whole, a week offline) would otherwise pay every per-message cost — a publish and
// its ack, a WebSocket frame, a protocol parse, a WebCrypto call on both sides — once per change; in a
// pack it pays them once per up to `PACK_MESSAGES` changes. A single change still goes alone, as it
// always has.
//
// A pack's plaintext is `frame([id₁, body₁, id₂, body₂, …])` (UTF-8), sealed under the pack's own id
// `<first change's id>+<count>` (deterministic: the same list published again is the same pack, which
// the server's de-duplication drops), with the header `Cowork-Pack: <count>`. Every change of a pack
// has the pack's stream sequence, so a reader hands the whole pack to the archive at once: it never
// cuts one between two batches.

import { decoder, encoder, frame, unframe } from './seal.mjs';

export const PACK_MESSAGES = 128; // changes sealed together at most …
export const PACK_BYTES = 256 << 10; // … and their bytes
export const PACK_SUBJECT = '_pack';
export const PACK_HEADER = 'Cowork-Pack';

// The first part of what `sealedItem` keeps for one change of a pack: shorter than any sealed payload
// (IV and tag alone are 28 bytes), so it cannot be taken for the chunks of a message sent alone.
const MARK = encoder.encode('cowork-pack');

/** The id a pack of `count` changes starting with the change `firstId` is published and sealed under. */
export const packId = (firstId, count) => `${firstId}+${count}`;

/** The bytes a change takes in a pack's plaintext. */
export const packedSize = (item) => 8 + encoder.encode(item.id).length + item.bytes.length;

/** The plaintext of a pack of `items` ([{ id, bytes }]). */
export const packPlain = (items) => frame(items.flatMap((m) => [encoder.encode(m.id), m.bytes]));

/**
 * The changes of a pack's `plain`text, [{ id, body }] (`body` null for one that is not text), or null
 * when it is not a pack of `count` changes.
 */
export function unpack(plain, count) {
  const parts = plain && unframe(plain);
  if (!parts || parts.length !== 2 * count) return null;
  const out = [];
  for (let i = 0; i < parts.length; i += 2) {
    let id;
    let body = null;
    try {
      id = decoder.decode(parts[i]);
    } catch {
      return null;
    }
    try {
      body = decoder.decode(parts[i + 1]);
    } catch {
      // kept aside by the caller, alone
    }
    out.push({ id, body });
  }
  return out;
}

/** What the archive keeps of one change of the pack `id` (as the stream held it, `data`) it sets aside. */
export const sealedItem = (id, data) => frame([MARK, encoder.encode(id), data]);

/** The pack's id and sealed payload when `parts` (a kept message, unframed) are one change of a pack. */
export function packOf(parts) {
  if (parts?.length !== 3 || parts[0].length !== MARK.length || !parts[0].every((b, i) => b === MARK[i])) return null;
  try {
    return { id: decoder.decode(parts[1]), data: parts[2] };
  } catch {
    return null;
  }
}

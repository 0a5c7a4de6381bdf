// Reading one stream message of a space: a change sent alone, a pack's changes, or a long change's last
// chunk (its earlier chunks fetched from the server when this read started after them), opened with the
// space's key. See the wire format in index.mjs and pack.mjs.

import { chunkData, decoder, frame, join, unseal } from './seal.mjs';
import { PACK_HEADER, sealedItem, unpack } from './pack.mjs';

export const META = '_meta';

// The changes one stream message gives, in order: one for a change sent alone ({ seq, id, body, sealed }),
// a pack's, or none for the set-up message and for every chunk but the last (kept in `partial` until
// the last arrives). One that cannot be opened is { seq, id, sealed, error }: the caller keeps it aside
// and reads on.
export async function decode(reader, subject, h, data, seq, partial) {
  if (subject === reader.prefix + META) return [];
  const msgId = h?.get('Nats-Msg-Id') ?? '';
  const chunk = h?.get('Cowork-Chunk') ?? '';
  const broken = (id, parts, why) => [{
    seq,
    id,
    sealed: frame(parts),
    error: `message ${seq} of space "${reader.space}" ${why}: it was altered, or written with another key`,
  }];
  const count = Number(h?.get(PACK_HEADER) ?? 0);
  if (count) {
    const items = Number.isInteger(count) && count > 1 ? unpack(await unseal(reader.key, data, msgId), count) : null;
    if (!items) return broken(msgId, [data], 'cannot be decrypted as a pack');
    // What is kept of one change set aside: the pack as the stream held it, and which change.
    const kept = () => sealedItem(msgId, data);
    return items.map(({ id, body }) =>
      body === null
        ? { seq, id, sealed: kept(), error: `a change in message ${seq} of space "${reader.space}" is not text once decrypted` }
        : { seq, id, body, get sealed() { return kept(); } },
    );
  }
  if (!chunk) {
    const body = await unseal(reader.key, data, msgId);
    if (!body) return broken(msgId, [data], 'cannot be decrypted');
    try {
      // `sealed` is framed only when asked for: the archive wants it only for a message it keeps aside.
      return [{ seq, id: msgId, body: decoder.decode(body), get sealed() { return frame([data]); } }];
    } catch {
      return broken(msgId, [data], 'is not text once decrypted');
    }
  }
  const [k, n] = chunk.split('/').map(Number);
  if (!(Number.isInteger(k) && Number.isInteger(n) && k >= 1 && k <= n)) {
    return broken(msgId, [data], 'has a malformed chunk header');
  }
  const id = k === n ? msgId : msgId.endsWith(`#${k}`) ? msgId.slice(0, -`#${k}`.length) : null;
  if (id === null) return k === n ? broken(msgId, [data], 'has a malformed chunk id') : [];
  const slot = `${id}\u0000${n}`;
  const parts = partial.get(slot) ?? new Map();
  partial.set(slot, parts);
  parts.set(k, data.slice());
  if (k < n) return [];
  partial.delete(slot);
  // Earlier chunks that came before where this read started: fetch them from the server.
  const jsm = await reader.manager();
  for (let at = Number(h.get('Cowork-First')) || 1; parts.size < n && at < seq; ) {
    const sm = await jsm.streams.getMessage(reader.stream, { next_by_subj: subject, seq: at });
    if (!sm || sm.seq >= seq) break;
    at = sm.seq + 1;
    const [i, m] = (sm.header?.get('Cowork-Chunk') ?? '').split('/').map(Number);
    if (m !== n || parts.has(i) || sm.header.get('Nats-Msg-Id') !== `${id}#${i}`) continue;
    parts.set(i, sm.data);
  }
  const sealed = [...parts.entries()].sort(([a], [b]) => a - b).map(([, p]) => p);
  if (parts.size < n) return broken(id, sealed, `is missing ${n - parts.size} of its ${n} chunks on the server`);
  const pieces = [];
  for (let i = 1; i <= n; i++) {
    const piece = await unseal(reader.key, parts.get(i), chunkData(id, i, n));
    if (!piece) return broken(id, sealed, `has a chunk (${i} of ${n}) that cannot be decrypted`);
    pieces.push(piece);
  }
  try {
    return [{ seq, id, body: decoder.decode(join(pieces)), get sealed() { return frame(sealed); } }];
  } catch {
    return broken(id, sealed, 'is not text once decrypted');
  }
}

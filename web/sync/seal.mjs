// The sync transport's keys and seals (see index.mjs for the wire format): a space's key from its
// passphrase or recovery key (PBKDF2-SHA-256), AES-GCM-256 seals bound to additional data, and the
// framing of a message's sealed chunks that the archive keeps for a message it cannot apply.

export const CHECK = 'cowork-sync key check';
export const IV_BYTES = 12;
export const TAG_BYTES = 16;

export const encoder = new TextEncoder();
export const decoder = new TextDecoder('utf-8', { fatal: true });
export const toBase64 = (bytes) => btoa(String.fromCharCode(...bytes));
export const fromBase64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
const RECOVERY_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'; // Crockford's base32: no I, L, O, U

/** A random recovery key: 160 bits as 8 groups of 4 base32 characters, e.g. "7KQ2-…". */
export function newRecoveryKey() {
  let value = crypto.getRandomValues(new Uint8Array(20)).reduce((v, byte) => (v << 8n) | BigInt(byte), 0n);
  let out = '';
  for (let i = 0; i < 32; i++, value >>= 5n) out = RECOVERY_ALPHABET[Number(value & 31n)] + out;
  return out.match(/.{4}/g).join('-');
}

// A recovery key typed in any case, with or without dashes or spaces, and with O for 0 or I/L for 1,
// is the same key; any other passphrase is taken as written (in Unicode NFC).
export function normalisePassphrase(passphrase) {
  const squashed = passphrase.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  if (squashed.length === 32 && [...squashed].every((c) => RECOVERY_ALPHABET.includes(c))) {
    return squashed.match(/.{4}/g).join('-');
  }
  return passphrase.normalize('NFC');
}

export async function deriveKey(passphrase, salt, iterations) {
  const material = await crypto.subtle.importKey('raw', encoder.encode(passphrase), 'PBKDF2', false, ['deriveKey']);
  return crypto.subtle.deriveKey(
    { name: 'PBKDF2', hash: 'SHA-256', salt, iterations },
    material,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  );
}

export async function seal(key, plaintext, additional) {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const params = { name: 'AES-GCM', iv, additionalData: encoder.encode(additional) };
  const sealed = new Uint8Array(await crypto.subtle.encrypt(params, key, plaintext));
  const out = new Uint8Array(IV_BYTES + sealed.length);
  out.set(iv);
  out.set(sealed, IV_BYTES);
  return out;
}

/** The plaintext, or null when the key or the additional data is not the one it was sealed with. */
export async function unseal(key, payload, additional) {
  if (payload.length < IV_BYTES + TAG_BYTES) return null;
  const params = { name: 'AES-GCM', iv: payload.subarray(0, IV_BYTES), additionalData: encoder.encode(additional) };
  try {
    return new Uint8Array(await crypto.subtle.decrypt(params, key, payload.subarray(IV_BYTES)));
  } catch {
    return null;
  }
}

export const checkData = (space) => `${CHECK}\u0000${space}`;
export const chunkData = (id, k, n) => `${id}\u0000${k}/${n}`;

/** The payloads of a message's chunks (one for a message in one piece) as one byte string. */
export function frame(parts) {
  const out = new Uint8Array(parts.reduce((sum, p) => sum + 4 + p.length, 0));
  const view = new DataView(out.buffer);
  let at = 0;
  for (const p of parts) {
    view.setUint32(at, p.length);
    out.set(p, at + 4);
    at += 4 + p.length;
  }
  return out;
}

/** The payloads `frame` joined, or null when `bytes` are not such a string. */
export function unframe(bytes) {
  const parts = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 0; at < bytes.length; ) {
    if (at + 4 > bytes.length) return null;
    const n = view.getUint32(at);
    if (at + 4 + n > bytes.length) return null;
    parts.push(bytes.subarray(at + 4, at + 4 + n));
    at += 4 + n;
  }
  return parts.length ? parts : null;
}

/** Byte strings one after another. */
export function join(pieces) {
  const out = new Uint8Array(pieces.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// Cowork's sync transport (spec §14). The storage worker loads it only when the user turns sync on, as
// the bundle scripts/sync-bundle.sh makes (a classic script putting these exports on the global
// `CoworkSync`), and calls it through those names. It moves the archive's changes through NATS
// JetStream over WebSocket (never a server of our own) and encrypts them on the device: the server
// stores and orders ciphertext; ids, subjects, sizes and times are all it sees.
//
//   connect({ url | servers, user, pass, token, creds, name, inboxPrefix }) → Connection
//   openSpace(connection, { space, passphrase, create, replicas }) → Space
//   newRecoveryKey() → "XXXX-XXXX-…" (160 random bits, accepted by openSpace as the passphrase)
//   space.publish([{ id, subject, body }], { pack }) → number acknowledged, in order
//   space.fetch(afterSeq, max, maxBytes) → { messages: [{ seq, id, body, sealed } | { seq, id, sealed, error }], lastSeq, streamLast }
//   space.unseal(id, sealed) → body (a message kept aside by the archive, opened again)
//   space.watch(afterSeq, onBatch, { onError }) → stop()
//   space.follow(afterSeq) → Follower: take(max) → { after, messages, lastSeq, streamLast } | null (broken),
//     wait(ms) → promise, broken → null | { kind: "gap" | "reconnect" | "error", message }, stop() (follow.mjs)
//   connection.status, connection.onStatus(listener) → unsubscribe; space.close(); connection.close()
// Every failure is a SyncError whose `kind` is "unreachable" | "auth" | "permission" | "passphrase" |
// "server" | "invalid" and whose message says what to do. A message that cannot be opened (altered,
// or sealed with another key) does not fail a read: it comes with `error` (what is wrong) instead of
// `body`, so the archive can keep it aside and read on. Every message read comes with `sealed`: its
// bytes as the stream holds them (each chunk's payload, framed by a 4-byte big-endian length), which
// the archive keeps for a message it cannot apply and `unseal` opens again later.
//
// Wire format. A space is the stream `cowork_<space>` holding the subjects `cowork.<space>.>`.
// - Its first message on `cowork.<space>._meta` is plaintext JSON: the KDF (PBKDF2-SHA-256, its
//   iteration count, a random 16-byte salt) and a key check (the constant CHECK sealed with the key).
//   Written by the first device that opens the space with `create`, under `Nats-Expected-Last-Subject-
//   Sequence: 0`, so two devices racing cannot set two salts; readers use the first one.
// - A change is a message on `cowork.<space>.<subject>` with header `Nats-Msg-Id: <id>` (JetStream drops
//   a second copy inside its duplicate window) and payload IV (12 random bytes) ‖ AES-GCM-256 ciphertext
//   of the UTF-8 body, with the id as additional data.
// - A body too large for the server's max_payload goes as n chunks on the same subject: chunk k of the
//   body's bytes, sealed on its own (additional data `<id>\0<k>/<n>`), with headers `Cowork-Chunk: k/n`
//   and `Nats-Msg-Id: <id>#<k>`, except the last, whose msg id is `<id>` and which also carries
//   `Cowork-First: <stream sequence of chunk 1>`. Readers reassemble at the last chunk (whose sequence
//   is the message's), fetching earlier chunks from the server when they started reading after them.
// - Consecutive changes published together go as packs (pack.mjs): one message on
//   `cowork.<space>._pack` with header `Cowork-Pack: <count>` holds up to 128 changes (256 KB), sealed
//   together under the pack's id; every change read from it has the pack's stream sequence.
import { credsAuthenticator, headers, wsconnect } from '@nats-io/nats-core';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import {
  CHECK,
  IV_BYTES,
  TAG_BYTES,
  checkData,
  chunkData,
  decoder,
  deriveKey,
  encoder,
  fromBase64,
  join,
  normalisePassphrase,
  seal,
  toBase64,
  unframe,
  unseal,
} from './seal.mjs';

import { SyncError, checkSeq, classify, invalid, noResponders } from './errors.mjs';
import { META, decode } from './decode.mjs';
import { Follower } from './follow.mjs';
import { PACK_BYTES, PACK_HEADER, PACK_MESSAGES, PACK_SUBJECT, packId, packOf, packPlain, packedSize, unpack } from './pack.mjs';

export { newRecoveryKey } from './seal.mjs';
export { SyncError };

const SPACE = /^[a-z0-9_-]{1,64}$/;
const SUBJECT = /^[A-Za-z0-9-][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$/; // no wildcards; `_…` is ours
const FORMAT = 'cowork-sync/1';
const ITERATIONS = 600_000;
const MAX_ITERATIONS = 10_000_000; // a bound on the work a forged _meta message can ask of us
const HEADER_ROOM = 512; // bytes of headers kept free in every message (ids are ≤ 256 bytes)
const WINDOW_MESSAGES = 64; // publishes in flight at once …
const WINDOW_BYTES = 4 << 20; // … and their bytes
const FETCH_BATCH = 256; // messages a pull asks for (decrypted together)
const WATCH_BATCH = 256;
const API_TIMEOUT = 10_000;

// --- Connection ----------------------------------------------------------------------------------------

/**
 * Connects to the NATS server at `url` (ws:// or wss://), or to any of `servers` (a list of such URLs:
 * the nodes of one cluster), as `user`/`pass`, or with a `token`, or with the text of a `.creds` file.
 * Replies come to `<inboxPrefix>.…`, by default `_INBOX_<user>` (any character other than a letter,
 * digit, _ or - becomes _), so the server can give every user a private inbox; pass
 * `inboxPrefix: "_INBOX"` for a server that grants `_INBOX.>`. The connection reconnects by itself, to
 * another of the servers when the one it used goes away; see `status` and `onStatus`.
 */
export async function connect({ url, servers, user, pass, token, creds, name, inboxPrefix } = {}) {
  const list = servers ?? [url];
  if (!Array.isArray(list) || list.length === 0) throw invalid('Give the sync server\'s address, like wss://sync.example.com.');
  for (const u of list) {
    if (typeof u !== 'string' || !/^wss?:\/\/[^\s/]+/i.test(u)) {
      throw invalid(`The sync server's address must start with ws:// or wss://, like wss://sync.example.com; "${u ?? ''}" does not.`);
    }
  }
  const ctx = { url: list.join(', '), action: 'connect' };
  const options = {
    servers: list,
    name: name ?? 'cowork',
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1000,
    timeout: API_TIMEOUT,
    pingInterval: 20_000,
  };
  if (user) {
    Object.assign(options, { user: String(user), pass: String(pass ?? '') });
    Object.assign(ctx, { who: `user ${user}`, secret: 'user name and password' });
  } else if (token) {
    Object.assign(options, { token: String(token) });
    Object.assign(ctx, { who: 'this token', secret: 'token' });
  } else if (creds) {
    try {
      options.authenticator = credsAuthenticator(new TextEncoder().encode(String(creds)));
    } catch (cause) {
      throw new SyncError('invalid', 'The credentials are not a NATS .creds file: paste the whole file.', { cause });
    }
    Object.assign(ctx, { who: 'these credentials', secret: 'credentials file' });
  }
  options.inboxPrefix = inboxPrefix ?? (user ? `_INBOX_${String(user).replace(/[^A-Za-z0-9_-]/g, '_')}` : '_INBOX');
  let nc;
  try {
    nc = await wsconnect(options);
  } catch (err) {
    throw classify(err, ctx);
  }
  return new Connection(nc, ctx);
}

/** A live connection. `status` is "online", "offline" (reconnecting by itself) or "closed". */
class Connection {
  #listeners = new Set();
  #manager = null;

  constructor(nc, ctx) {
    this.nc = nc;
    this.ctx = ctx;
    this.status = 'online';
    this.js = jetstream(nc, { timeout: API_TIMEOUT });
    (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect' || s.type === 'staleConnection') this.#set('offline');
        else if (s.type === 'reconnect') this.#set('online');
      }
    })().catch(() => {});
    nc.closed().then((err) => this.#set('closed', err ? classify(err, { ...ctx, action: 'stay connected' }) : undefined));
  }

  #set(status, error) {
    if (this.status === status || this.status === 'closed') return;
    this.status = status;
    for (const listener of this.#listeners) {
      try {
        listener({ status, error });
      } catch (err) {
        console.error('cowork sync: a status listener failed', err);
      }
    }
  }

  /** Calls `listener({ status, error })` on every change of `status`; returns a function to stop. */
  onStatus(listener) {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The JetStream manager (stream info, creation, direct reads). */
  async manager() {
    this.#manager ??= jetstreamManager(this.nc, { checkAPI: false, timeout: API_TIMEOUT });
    return this.#manager;
  }

  get online() {
    return this.status === 'online';
  }

  /** Throws unless the connection is up: what needs the server fails at once rather than timing out. */
  ready() {
    if (this.status === 'closed') throw invalid('The connection to the sync server is closed: connect again.');
    if (this.status === 'offline') {
      throw new SyncError('unreachable', 'The sync server cannot be reached right now: Cowork reconnects by itself; try again when it is back online.');
    }
  }

  /** Closes the connection; the spaces opened on it stop too. */
  async close() {
    if (!this.nc.isClosed()) await this.nc.close();
    this.#set('closed');
  }
}

// --- Spaces --------------------------------------------------------------------------------------------

/**
 * Opens `space` with `passphrase` (or a recovery key). With `create`, makes its stream when there is
 * none (file storage, JetStream's duplicate window, no deleting or purging, on `replicas` nodes of a
 * cluster: 1 unless given) and sets up its encryption when no device has yet. A wrong passphrase
 * throws kind "passphrase" before any message is read.
 */
export async function openSpace(connection, { space, passphrase, create = false, replicas = 1 } = {}) {
  if (!(connection instanceof Connection)) throw invalid('openSpace needs a connection from connect().');
  if (typeof space !== 'string' || !SPACE.test(space)) {
    throw invalid(`A space name is 1 to 64 characters among a–z, 0–9, _ and -; "${space ?? ''}" is not one.`);
  }
  if (typeof passphrase !== 'string' || passphrase.trim() === '') throw invalid('Enter the space\'s passphrase or recovery key.');
  connection.ready();
  const phrase = normalisePassphrase(passphrase);
  const ctx = { ...connection.ctx, space, action: `open space "${space}"` };
  const stream = `cowork_${space}`;
  const metaSubject = `cowork.${space}.${META}`;
  try {
    const jsm = await connection.manager();
    let info = await jsm.streams.info(stream).catch((err) => (err?.name === 'StreamNotFoundError' ? null : Promise.reject(err)));
    if (!info && !create) throw invalid(`There is no space "${space}" on the sync server: check its name, or create it.`);
    if (!info) {
      const config = {
        name: stream,
        subjects: [`cowork.${space}.>`],
        storage: 'file',
        retention: 'limits',
        deny_delete: true,
        deny_purge: true,
        num_replicas: replicas,
      };
      // Another device may create it at the same moment: then its stream is the one.
      info = await jsm.streams.add(config).catch((err) => {
        if (err?.code === 10058) return jsm.streams.info(stream);
        if (classify(err).kind !== 'permission') throw err;
        throw new SyncError('permission', `There is no space "${space}" on the sync server, and ${ctx.who ?? 'this connection'} may not create it: check its name, or ask the server's administrator to create the stream ${stream}.`, { cause: err });
      });
    }
    const subjects = info.config.subjects ?? [];
    if (subjects.length !== 1 || subjects[0] !== `cowork.${space}.>`) {
      throw invalid(`The stream ${stream} on the sync server is not a Cowork space (it holds ${subjects.join(', ') || 'no subjects'}): ask the server's administrator.`);
    }
    const readMeta = () => jsm.streams.getMessage(stream, { next_by_subj: metaSubject, seq: 1 });
    let stored = await readMeta();
    let key = null;
    if (!stored && !create) throw invalid(`Space "${space}" has not been set up for Cowork yet: create it on one device first.`);
    if (!stored) {
      if (phrase.length < 8) throw invalid('Choose a passphrase of at least 8 characters, or use a recovery key.');
      const salt = crypto.getRandomValues(new Uint8Array(16));
      key = await deriveKey(phrase, salt, ITERATIONS);
      const check = await seal(key, encoder.encode(CHECK), checkData(space));
      const meta = { format: FORMAT, kdf: 'PBKDF2-SHA-256', iterations: ITERATIONS, salt: toBase64(salt), cipher: 'AES-GCM-256', check: toBase64(check) };
      try {
        await connection.js.publish(metaSubject, JSON.stringify(meta), { expect: { lastSubjectSequence: 0 } });
      } catch (err) {
        if (err?.code !== 10071) throw err; // 10071: another device set the space up first
        key = null;
      }
      stored = await readMeta();
      if (!stored) throw new SyncError('server', `The sync server did not keep the set-up of space "${space}": try again.`);
    }
    let meta;
    try {
      meta = JSON.parse(decoder.decode(stored.data));
    } catch {
      meta = null;
    }
    const iterations = meta?.iterations;
    if (meta?.format !== FORMAT || meta.kdf !== 'PBKDF2-SHA-256' || !Number.isInteger(iterations) || iterations < ITERATIONS || iterations > MAX_ITERATIONS) {
      throw invalid(`Space "${space}" was set up by a Cowork this version does not understand: update Cowork on this device.`);
    }
    const salt = fromBase64(meta.salt);
    key ??= await deriveKey(phrase, salt, iterations);
    const opened = await unseal(key, fromBase64(meta.check), checkData(space));
    if (!opened || decoder.decode(opened) !== CHECK) {
      throw new SyncError('passphrase', `That passphrase (or recovery key) does not open space "${space}": check it and try again.`);
    }
    return new Space(connection, space, key);
  } catch (err) {
    throw classify(err, ctx);
  }
}

/** An open space: publishes, reads and watches its messages. */
class Space {
  #connection;
  #key;
  #watchers = new Set();
  #closed = false;
  #reader;

  constructor(connection, space, key) {
    this.#connection = connection;
    this.#key = key;
    this.space = space;
    this.stream = `cowork_${space}`;
    this.prefix = `cowork.${space}.`;
    this.ctx = { ...connection.ctx, space };
    // What `decode` reads a message of this space with.
    this.#reader = { key, prefix: this.prefix, space, stream: this.stream, manager: () => connection.manager() };
  }

  #open() {
    if (this.#closed) throw invalid(`Space "${this.space}" is closed: open it again.`);
    this.#connection.ready();
  }

  /**
   * Publishes `messages` ([{ id, subject, body }]) in order and returns how many were acknowledged
   * (duplicates included): a prefix of the list. When the connection is offline, or drops on the way,
   * it returns early with the count so far: publish the rest, with the same ids, once it is back (a
   * repeated id is dropped by the server). Other failures throw, with `acknowledged` on the error.
   * Consecutive changes go as packs of up to `pack` changes (see pack.mjs; 1: each alone).
   */
  async publish(messages, { pack: most = PACK_MESSAGES } = {}) {
    if (this.#closed || this.#connection.status === 'closed') this.#open();
    if (!Array.isArray(messages)) throw invalid('publish takes a list of { id, subject, body }.');
    if (!Number.isInteger(most) || most < 1) throw invalid('publish packs at least one change a message.');
    const items = messages.map((m, i) => {
      const { id, subject, body } = m ?? {};
      if (typeof id !== 'string' || !id || encoder.encode(id).length > 256 || /[\u0000-\u001f\u007f]/.test(id)) {
        throw invalid(`Message ${i} has no usable id (1 to 256 bytes, no control characters).`);
      }
      if (typeof subject !== 'string' || !SUBJECT.test(subject)) throw invalid(`Message ${id} has an unusable subject "${subject}".`);
      if (typeof body !== 'string') throw invalid(`Message ${id} has no body string.`);
      return { id, subject: this.prefix + subject, bytes: encoder.encode(body) };
    });
    const ctx = { ...this.ctx, action: `publish to space "${this.space}"` };
    const limit = this.#connection.nc.info?.max_payload ?? 1 << 20;
    const packLimit = Math.min(PACK_BYTES, limit - HEADER_ROOM - IV_BYTES - TAG_BYTES);
    let acknowledged = 0;
    // Stops the loop (returns false) when the connection is the trouble, and throws otherwise.
    const failed = (err) => {
      const error = classify(err, ctx);
      if (error.kind === 'unreachable') return false;
      error.acknowledged = acknowledged;
      throw error;
    };
    // A window of sealed messages goes out in one synchronous burst, and the next only after every ack
    // of this one: a dropped connection then loses a suffix of the window at most, so what the server
    // keeps is always in the caller's order, whatever is published again later.
    let window = [];
    let windowBytes = 0;
    const flush = async () => {
      const burst = window;
      window = [];
      windowBytes = 0;
      if (!burst.length) return true;
      if (!this.#connection.online) return false;
      const acks = burst.map((m) => this.#ack(m.subject, m.payload, m.headers ? { msgID: m.id, headers: m.headers } : { msgID: m.id }));
      for (const [i, result] of (await Promise.allSettled(acks)).entries()) {
        if (result.status === 'rejected') return failed(result.reason);
        acknowledged += burst[i].count;
      }
      return true;
    };
    // The changes waiting to go together: sealed alone when there is one, as a pack otherwise.
    let packed = [];
    let packedBytes = 0;
    const sealPacked = async () => {
      const group = packed;
      packed = [];
      packedBytes = 0;
      if (!group.length) return true;
      let sealed;
      if (group.length === 1) {
        const [item] = group;
        sealed = { ...item, count: 1, payload: await seal(this.#key, item.bytes, item.id) };
      } else {
        const id = packId(group[0].id, group.length);
        const h = headers();
        h.set(PACK_HEADER, String(group.length));
        const payload = await seal(this.#key, packPlain(group), id);
        sealed = { id, subject: this.prefix + PACK_SUBJECT, headers: h, count: group.length, payload };
      }
      window.push(sealed);
      windowBytes += sealed.payload.length;
      if (window.length >= WINDOW_MESSAGES || windowBytes >= WINDOW_BYTES) return flush();
      return true;
    };
    for (const item of items) {
      if (IV_BYTES + item.bytes.length + TAG_BYTES + HEADER_ROOM <= limit) {
        const size = packedSize(item);
        if (packed.length && (packed.length >= most || packedBytes + size > packLimit)) {
          if (!(await sealPacked())) return acknowledged;
        }
        packed.push(item);
        packedBytes += size;
        continue;
      }
      if (!(await sealPacked()) || !(await flush())) return acknowledged;
      const size = limit - HEADER_ROOM - IV_BYTES - TAG_BYTES;
      if (size < 1024) throw new SyncError('server', `The sync server's max_payload (${limit} bytes) is too small: ask its administrator to raise it.`);
      const n = Math.ceil(item.bytes.length / size);
      let first = 0;
      for (let k = 1; k <= n; k++) {
        if (!this.#connection.online) return acknowledged;
        const h = headers();
        h.set('Cowork-Chunk', `${k}/${n}`);
        if (k === n) h.set('Cowork-First', String(first));
        const payload = await seal(this.#key, item.bytes.subarray((k - 1) * size, k * size), chunkData(item.id, k, n));
        const msgID = k === n ? item.id : `${item.id}#${k}`;
        try {
          const ack = await this.#ack(item.subject, payload, { msgID, headers: h });
          if (k === 1) first = ack.seq; // for a repeated chunk, the sequence of the copy the server kept
        } catch (err) {
          if (!failed(err)) return acknowledged;
        }
      }
      acknowledged++;
    }
    if (await sealPacked()) await flush();
    return acknowledged;
  }

  // The server's ack of one publish, or a rejection as soon as the connection drops: an ack that was on
  // its way then may never come, and waiting for its time-out would only delay publishing again.
  #ack(subject, payload, options) {
    const ack = this.#connection.js.publish(subject, payload, { ...options, timeout: API_TIMEOUT });
    return new Promise((resolve, reject) => {
      const dropped = new SyncError('unreachable', 'The connection to the sync server dropped.');
      const stop = this.#connection.onStatus(({ status }) => status !== 'online' && reject(dropped));
      ack.then(resolve, reject).finally(stop);
    });
  }

  /**
   * The space's messages after stream sequence `afterSeq`, in stream order, decrypted: at most `max`,
   * and `lastSeq`, the sequence read up to (pass it as the next `afterSeq`), and `streamLast`, the
   * stream's last sequence when the read began (how far there is to go). Returns at once when there is
   * nothing new. A read also ends with the message that brings its bytes to `maxBytes`, so a large
   * `max` for a catch-up does not hold a stream of large attachments in memory at once.
   */
  async fetch(afterSeq = 0, max = 1000, maxBytes = Infinity) {
    this.#open();
    checkSeq(afterSeq);
    if (!Number.isInteger(max) || max < 1) throw invalid('fetch needs a positive maximum count.');
    if (!(maxBytes > 0)) throw invalid('fetch needs a positive maximum of bytes.');
    const ctx = { ...this.ctx, action: `read space "${this.space}"` };
    // In a cluster a new consumer may not answer its first pull yet ("no responders"): read again, a
    // little later, a few times, before saying the server failed.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#read(afterSeq, max, maxBytes);
      } catch (err) {
        if (attempt < 4 && noResponders(err)) {
          await new Promise((ok) => setTimeout(ok, 50 * attempt));
          continue;
        }
        throw classify(err, ctx);
      }
    }
  }

  // One read for `fetch`, through a consumer of its own.
  async #read(afterSeq, max, maxBytes) {
    let consumer = null;
    try {
      const jsm = await this.#connection.manager();
      const last = (await jsm.streams.info(this.stream)).state.last_seq;
      const messages = [];
      let cursor = afterSeq;
      if (last <= afterSeq) return { messages, lastSeq: afterSeq, streamLast: last };
      consumer = await this.#connection.js.consumers.get(this.stream, { opt_start_seq: afterSeq + 1 });
      const partial = new Map();
      let bytes = 0;
      let got = 0; // changes read (a pack's count, from its header)
      let seen = 0; // stream messages read
      for (let done = false; !done && got < max && cursor < last; ) {
        // A pull asks for about as many stream messages as hold what is left of `max`, judging by those
        // read so far (the first asks for one): a pack holds up to 128 changes, and what a pull brings
        // past `max` is read for nothing. A read ends with the pack `max` ends in, never inside one.
        const each = seen ? Math.max(1, got / seen) : max;
        const want = Math.max(1, Math.min(FETCH_BATCH, Math.ceil((max - got) / each), last - cursor));
        const batch = await consumer.fetch({ max_messages: want, expires: 2000 });
        // Every message of the pull is decrypted at once (WebCrypto works off this thread) and kept in
        // stream order; `decode` files a chunk away before it first waits, so chunks still meet.
        const decoding = [];
        for await (const m of batch) {
          cursor = m.seq;
          bytes += m.data.length;
          if (m.subject !== this.prefix + META) {
            seen++;
            got += Number(m.headers?.get(PACK_HEADER)) || 1;
          }
          decoding.push(decode(this.#reader, m.subject, m.headers, m.data, m.seq, partial));
          if (m.info.pending === 0 || bytes >= maxBytes || got >= max) {
            done = true; // read to the end, or enough for one read (the next starts after this one)
            break;
          }
        }
        for (const changes of await Promise.all(decoding)) messages.push(...changes);
        if (decoding.length === 0) done = true; // the rest was removed from the stream while we read
      }
      return { messages, lastSeq: cursor, streamLast: last };
    } finally {
      consumer?.delete().catch(() => {});
    }
  }

  /**
   * Delivers the messages after `afterSeq`, then each new one as it arrives, to `onBatch(messages)` in
   * batches in stream order (the next batch waits for `onBatch`'s promise). Returns `stop()`. Keeps
   * going across reconnections; a failure (including one thrown by onBatch) stops it and is passed to
   * `onError` (by default logged).
   */
  watch(afterSeq, onBatch, { onError } = {}) {
    this.#open();
    checkSeq(afterSeq);
    if (typeof onBatch !== 'function') throw invalid('watch needs a function to call with each batch.');
    const ctx = { ...this.ctx, action: `watch space "${this.space}"` };
    let stopped = false;
    let consumer = null;
    let messages = null;
    const run = async () => {
      consumer = await this.#connection.js.consumers.get(this.stream, { opt_start_seq: afterSeq + 1 });
      if (stopped) return;
      messages = await consumer.consume({ max_messages: WATCH_BATCH, expires: 30_000 });
      const partial = new Map();
      let batch = [];
      for await (const m of messages) {
        if (stopped) break;
        batch.push(...(await decode(this.#reader, m.subject, m.headers, m.data, m.seq, partial)));
        if (batch.length && (m.info.pending === 0 || batch.length >= WATCH_BATCH)) {
          const ready = batch;
          batch = [];
          await onBatch(ready);
        }
      }
    };
    const done = run()
      .catch((err) => {
        if (stopped) return;
        const error = classify(err, ctx);
        if (onError) onError(error);
        else console.error('cowork sync: watching stopped', error);
      })
      .finally(() => {
        this.#watchers.delete(stop);
        messages?.stop();
        consumer?.delete().catch(() => {});
      });
    const stop = async () => {
      stopped = true;
      messages?.stop();
      await done;
    };
    this.#watchers.add(stop);
    return stop;
  }

  /**
   * Follows the space after `afterSeq` by push (see follow.mjs): each new message is held, decoded,
   * within milliseconds of the server storing it, for `take`; after a gap, a reconnection or an error
   * the follower is `broken` and the caller reads from its cursor with `fetch`. Stopped by `close`.
   */
  follow(afterSeq) {
    this.#open();
    checkSeq(afterSeq);
    const ctx = { ...this.ctx, action: `follow space "${this.space}"` };
    const read = (m, partial) => decode(this.#reader, m.subject, m.headers, m.data, m.seq, partial);
    const follower = new Follower(this.#connection, this.stream, afterSeq, read, ctx);
    const stop = () => follower.stop();
    this.#watchers.add(stop);
    follower.done.finally(() => this.#watchers.delete(stop));
    return follower;
  }

  /**
   * Opens a message kept as `sealed` (see `fetch`) under the message id `id`: its body. Throws a
   * SyncError of kind "invalid" when it still cannot be opened with this space's key.
   */
  async unseal(id, sealed) {
    const parts = sealed instanceof Uint8Array ? unframe(sealed) : null;
    if (typeof id !== 'string' || !parts) throw invalid('unseal takes a message id and the bytes fetch gave as `sealed`.');
    const pack = packOf(parts);
    if (pack) {
      const count = Number(pack.id.slice(pack.id.lastIndexOf('+') + 1));
      const items = unpack(await unseal(this.#key, pack.data, pack.id), count);
      if (!items) throw invalid(`Message ${pack.id} of space "${this.space}" cannot be decrypted with this space's key.`);
      const item = items.find((m) => m.id === id);
      if (!item) throw invalid(`Message ${id} is not in the pack ${pack.id} of space "${this.space}".`);
      if (item.body === null) throw invalid(`Message ${id} of space "${this.space}" is not text once decrypted.`);
      return item.body;
    }
    const n = parts.length;
    const pieces = [];
    for (let k = 1; k <= n; k++) {
      const piece = await unseal(this.#key, parts[k - 1], n === 1 ? id : chunkData(id, k, n));
      if (!piece) throw invalid(`Message ${id} of space "${this.space}" cannot be decrypted with this space's key.`);
      pieces.push(piece);
    }
    try {
      return decoder.decode(join(pieces));
    } catch {
      throw invalid(`Message ${id} of space "${this.space}" is not text once decrypted.`);
    }
  }

  /** Stops this space's watches; the connection stays open. */
  async close() {
    this.#closed = true;
    await Promise.all([...this.#watchers].map((stop) => stop()));
  }

}

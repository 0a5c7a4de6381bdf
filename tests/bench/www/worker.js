// The benchmark's dedicated worker: the real store (wasm, OPFS sahpool) and its peers measured side by
// side in the same run. Each phase starts from a fresh worker (fresh wasm memory).
import init, * as w from './pkg/cowork_bench.js';

const log = (msg) => postMessage({ log: msg });
const SEED = 42;

self.onmessage = async (e) => {
  const { name, options } = e.data;
  try {
    await init();
    await w.install_opfs();
    postMessage({ result: await PHASES[name](options) });
  } catch (err) {
    postMessage({ error: String(err?.stack ?? err) });
  }
};

// --- peers --------------------------------------------------------------------------------------------

/** The raw floors, on OPFS sync access handles: `write`, one write + flush of the same bytes, appended
 *  to one file (`bench-floor.bin`); `commit`, the least a SQLite commit does on the pool: the bytes
 *  rounded up to whole 4 KiB pages written to a journal file + flush, then to the database file (the
 *  same handle as `write`) + flush. */
async function openFloor() {
  const root = await navigator.storage.getDirectory();
  const open = async (name) => {
    await root.removeEntry(name).catch(() => {});
    return (await root.getFileHandle(name, { create: true })).createSyncAccessHandle();
  };
  const handle = await open('bench-floor.bin');
  const journal = await open('bench-floor-journal.bin');
  let [at, journalAt] = [0, 0];
  const PAGE = 4096;
  return {
    write(bytes) {
      const t = performance.now();
      handle.write(bytes, { at });
      handle.flush();
      const ms = performance.now() - t;
      at += bytes.byteLength;
      return ms;
    },
    commit(bytes) {
      const pages = new Uint8Array(Math.ceil(bytes.byteLength / PAGE) * PAGE);
      pages.set(bytes);
      const t = performance.now();
      journal.write(pages, { at: journalAt });
      journal.flush();
      handle.write(pages, { at });
      handle.flush();
      const ms = performance.now() - t;
      journalAt += pages.byteLength;
      at += pages.byteLength;
      return ms;
    },
    /** The same bytes written as SQLite's WAL writes a transaction's pages: per 4 KiB page, its 24-byte
     *  frame header and the page, two writes; then one flush. */
    paged(bytes) {
      const header = new Uint8Array(24);
      const t = performance.now();
      for (let i = 0; i < bytes.byteLength; i += PAGE) {
        handle.write(header, { at });
        handle.write(bytes.subarray(i, i + PAGE), { at: at + 24 });
        at += 24 + PAGE;
      }
      handle.flush();
      return performance.now() - t;
    },
    close: () => {
      handle.close();
      journal.close();
    },
  };
}

/** SHA-256 of `bytes` by WebCrypto, in lower-case hex (the storage worker's `digest::sha256`). */
async function webDigest(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

function idbOpen(name) {
  return new Promise((ok, fail) => {
    const del = indexedDB.deleteDatabase(name);
    del.onerror = () => fail(del.error);
    del.onsuccess = () => {
      const req = indexedDB.open(name, 1);
      req.onupgradeneeded = () => {
        req.result.createObjectStore('turns', { autoIncrement: true });
        req.result.createObjectStore('conversations', { keyPath: 'id' });
      };
      req.onsuccess = () => ok(req.result);
      req.onerror = () => fail(req.error);
    };
  });
}

/** One put in its own readwrite transaction; resolves to the ms until the transaction completed. */
function idbPut(db, store, value, durability) {
  return new Promise((ok, fail) => {
    const t = performance.now();
    const tx = db.transaction([store], 'readwrite', { durability });
    tx.objectStore(store).put(value);
    tx.oncomplete = () => ok(performance.now() - t);
    tx.onerror = () => fail(tx.error);
    tx.onabort = () => fail(tx.error ?? new Error('aborted'));
  });
}

/** The app's sync transport (dist/sync-*.js, served as ./sync.js): a classic script defining the global
 *  `CoworkSync`, evaluated here as the storage worker's importScripts would (a module worker has none). */
async function syncModule() {
  if (!self.CoworkSync) (0, eval)(await (await fetch('./sync.js')).text());
  return self.CoworkSync;
}

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/** The storage worker's round cadence (web/src/worker/sync.rs): 20 ms after a busy round, then 100,
 *  150, … up to 300 ms while idle — at most: a follower holding something, or a write, ends the wait. */
function cadence() {
  let idle = 0;
  return (worked) => {
    idle = worked ? 0 : Math.min(idle + 1, 6);
    return idle === 0 ? 20 : Math.min(50 * idle + 50, 300);
  };
}

/** Publishes what waits in `bench`'s outbox, one batch of 500; resolves to how many went. */
async function publishBatch(bench, space) {
  const out = JSON.parse(bench.sync_outgoing(500));
  if (!out.length) return 0;
  const acked = await space.publish(out.map(({ id, subject, body }) => ({ id, subject, body })));
  if (acked > 0) bench.sync_published(out[Math.min(acked, out.length) - 1].seq);
  if (acked < out.length) throw new Error(`the server acknowledged ${acked} of ${out.length} messages`);
  return acked;
}

/** Fetches up to `batch` messages (and 16 MB) after `bench`'s cursor and applies them, as the storage
 *  worker's rounds do (web/src/worker/sync.rs, `FETCH`); resolves to [messages, ms]. */
async function applyBatch(bench, space, after, batch = 2000) {
  const cursor = Math.max(bench.sync_cursor(), after.seq);
  const { messages, lastSeq } = await space.fetch(cursor, batch, 16 << 20);
  after.seq = Math.max(after.seq, lastSeq ?? 0);
  if (!messages.length) return [0, 0];
  return [messages.length, bench.apply_sync(messages)];
}

/** The storage worker's read by push (web/src/worker/sync/push.rs): what the follower holds when its
 *  batch continues where `bench` has read (core's sync::pushed: `after` at or before that, what a fetch
 *  read already skipped), else a fetch from there, following once a fetch reads to the stream's end;
 *  applied as applyBatch does. `read`: { seq, follower }. Resolves to [messages, ms]. */
async function receiveBatch(bench, space, read) {
  const position = Math.max(bench.sync_cursor(), read.seq);
  const taken = read.follower?.take(500);
  let messages;
  if (taken && taken.after <= position) {
    messages = taken.messages.filter((m) => m.seq > position);
    read.seq = Math.max(read.seq, taken.lastSeq);
  } else {
    read.follower?.stop();
    read.follower = null;
    const fetched = await space.fetch(position, 500);
    messages = fetched.messages;
    read.seq = Math.max(read.seq, fetched.lastSeq ?? 0);
    if (fetched.lastSeq >= fetched.streamLast) read.follower = space.follow(fetched.lastSeq);
  }
  if (!messages.length) return [0, 0];
  return [messages.length, bench.apply_sync(messages)];
}

/** The wait between two of the worker's rounds (sync/push.rs `wait`): `ms` at most, less when the
 *  follower holds something or `wake` (a write on this device, as the hub wakes sync) is called. */
function roundWait(ms, follower, waker) {
  if (waker.woken) {
    waker.woken = false;
    return Promise.resolve();
  }
  const woken = new Promise((ok) => {
    const timer = setTimeout(ok, ms);
    waker.resolve = () => { clearTimeout(timer); ok(); };
  });
  return Promise.race([woken, follower?.wait(ms)].filter(Boolean)).finally(() => { waker.resolve = null; });
}
const wake = (waker) => (waker.resolve ? waker.resolve() : (waker.woken = true));

// `url`: one server's, or a list (a cluster's nodes); `replicas`: the stream's copies when created.
const openSpace = async (S, { url, space, passphrase, replicas = 1 }, name, create = false) => {
  const connection = await S.connect({ servers: [url].flat(), user: 'carol', pass: 'carol-secret', name });
  return { connection, space: await S.openSpace(connection, { space, passphrase, create, replicas }) };
};

// --- phases -------------------------------------------------------------------------------------------

/** Context assembly of the first session as the agent loop does it, `reps` times per window: a new
 *  turn (a reply streamed in as the agent writes one, or another turn appended), then the context of
 *  the next request. Times and what was read; `first_ms` is the session's
 *  first assembly, when the archive keeps none of its turns yet (`store/turn_cache.rs`). */
function assemblies(bench, windows, reps) {
  const out = {};
  for (const window of windows) {
    const ms = [];
    let info;
    bench.reopen();
    const first_ms = bench.context(0, window)[0];
    for (let r = 0; r < reps; r++) {
      bench.append_to(0);
      const [t, read, messages, tokens] = bench.context(0, window);
      ms.push(t);
      info = { turns_read: read, messages, estimated_tokens: tokens };
    }
    out[window] = { ms, first_ms, ...info };
  }
  return out;
}

const PHASES = {
  /** Durable append at 1k and 10k turns beside the floor, strict IndexedDB and the whole-conversation put,
   *  and the same appends to a twin archive with sync on (its outbox written in each append's transaction). */
  async append({ iterations = 200, sizes = [1000, 10000], pragmas = [] }) {
    w.remove_archive('append.db');
    w.remove_archive('append-sync.db');
    const bench = new w.Bench('append.db', SEED);
    const synced = new w.Bench('append-sync.db', SEED);
    const applied = pragmas.map((p) => [p, bench.exec(p)]);
    const floor = await openFloor();
    const db = await idbOpen('cowork-bench');
    const encoder = new TextEncoder();
    const out = { journal_mode: bench.exec('PRAGMA journal_mode'), page_size: bench.exec('PRAGMA page_size'), applied, sizes: {} };
    let seeded = 0;
    for (const size of sizes) {
      for (const b of [bench, synced]) {
        if (seeded === 0) b.seed_session(size);
        else b.grow_current(size - seeded);
      }
      if (seeded === 0) synced.enable_sync();
      seeded = size;
      // The chat-app peer keeps the same conversation as one array and puts it whole per message.
      const conversation = { id: 'c', title: 'bench', messages: JSON.parse(w.records(size, SEED + 1)) };
      const r = { store: [], synced: [], floor: [], commit_floor: [], idb_strict: [], idb_whole: [] };
      for (let i = 0; i < iterations; i++) {
        const record = bench.prepare_turn();
        r.store.push(bench.append_prepared());
        synced.prepare_turn();
        r.synced.push(synced.append_prepared());
        r.floor.push(floor.write(encoder.encode(record)));
        r.commit_floor.push(floor.commit(encoder.encode(record)));
        r.idb_strict.push(await idbPut(db, 'turns', JSON.parse(record), 'strict'));
        conversation.messages.push(JSON.parse(record));
        r.idb_whole.push(await idbPut(db, 'conversations', conversation, 'default'));
        conversation.messages.pop(); // stays at `size` turns
      }
      out.sizes[size] = r;
      log(`append at ${size} turns done`);
    }
    floor.close();
    db.close();
    bench.close();
    synced.close();
    w.remove_archive('append.db');
    w.remove_archive('append-sync.db');
    return out;
  },

  /** A turn with a 1 MB attachment appended durably, beside the raw OPFS write + flush of the same bytes;
   *  `store`: WebCrypto's digest, then the append (as the storage worker saves a message's attachment);
   *  `call`: the same timed from here as one span (the bytes' copy into wasm memory included); then the
   *  breakdown (the digest, then `Bench::attach_parts`: classifying, the blob insert, the commit, each on
   *  a new content). */
  async attach({ iterations = 40, bytes = 1024 * 1024, turns = 1000 }) {
    w.remove_archive('attach.db');
    const bench = new w.Bench('attach.db', SEED);
    bench.seed_session(turns);
    const floor = await openFloor();
    const data = new Uint8Array(bytes);
    for (let i = 0; i < bytes; i += 65536) crypto.getRandomValues(data.subarray(i, Math.min(bytes, i + 65536)));
    const r = { store: [], call: [], floor: [], paged: [], bytes, digest: [], hash: [], insert: [], commit: [] };
    for (let i = 0; i < iterations; i++) {
      new DataView(data.buffer).setUint32(0, i); // a new content each time (no deduplication)
      // As the storage worker does it (web/src/worker/digest.rs): WebCrypto's digest, then the append.
      const t = performance.now();
      const sha256 = await webDigest(data);
      const digested = performance.now();
      const saved = bench.append_with_attachment(data, sha256);
      r.store.push(digested - t + saved);
      r.call.push(performance.now() - t);
      r.floor.push(floor.write(data));
      r.paged.push(floor.paged(data));
    }
    for (let i = 0; i < iterations; i++) {
      new DataView(data.buffer).setUint32(0, iterations + i);
      const t = performance.now();
      const sha256 = await webDigest(data);
      r.digest.push(performance.now() - t);
      const [hash, insert, commit] = bench.attach_parts(data, sha256);
      r.hash.push(hash);
      r.insert.push(insert);
      r.commit.push(commit);
    }
    floor.close();
    bench.close();
    w.remove_archive('attach.db');
    log('attachment appends done');
    return r;
  },

  /** Context assembly alone (for `run.mjs --phases context`): a fresh archive of one 10k-turn session,
   *  the same assemblies as the search phase's. */
  async context({ perSession = 10000, contextReps = 40, windows }) {
    w.remove_archive('context.db');
    const bench = new w.Bench('context.db', SEED);
    bench.seed_session(perSession);
    const out = assemblies(bench, windows, contextReps);
    bench.close();
    w.remove_archive('context.db');
    return out;
  },

  /** Builds the archive: 10 sessions of 10k turns; searches at 10k and 100k; context assembly at 100k. */
  async search({ sessions = 10, perSession = 10000, queries, reps = 15, likeReps = 2, contextReps = 40, windows }) {
    w.remove_archive('archive.db');
    const bench = new w.Bench('archive.db', SEED);
    const out = { seed_ms: [], at: {} };
    const measure = (label) => {
      const kinds = {};
      for (const [kind, list] of queries) {
        const fts = [], like = [], hits = [], likeRows = [];
        for (let r = 0; r < reps; r++) for (const q of list) { const [ms, n] = bench.search(q); fts.push(ms); if (r === 0) hits.push(n); }
        for (let r = 0; r < likeReps; r++) for (const q of list) { const [ms, n] = bench.like(q); like.push(ms); if (r === 0) likeRows.push(n); }
        kinds[kind] = { fts, like, hits, like_rows: likeRows };
      }
      out.at[label] = { turns: bench.turn_total(), bytes: bench.archive_bytes(), kinds };
      log(`search at ${label} done`);
    };
    for (let s = 0; s < sessions; s++) {
      out.seed_ms.push(bench.seed_session(perSession));
      if (s === 0) measure('10k');
      log(`seeded ${(s + 1) * perSession} turns`);
    }
    measure('100k');
    // Search by words and meaning at 100k: every turn given a vector first (the worker's indexing,
    // timed), then the same query mix with a query vector each.
    const byMeaning = () => {
      const [index_ms, vectors] = bench.index_vectors();
      const first = bench.search_hybrid(queries[0][1][0])[0];
      const kinds = {};
      for (const [kind, list] of queries) {
        const ms = [];
        for (let r = 0; r < reps; r++) for (const q of list) ms.push(bench.search_hybrid(q)[0]);
        kinds[kind] = ms;
      }
      return { index_ms, vectors, first_ms: first, kinds, memory: w.wasm_memory_bytes() };
    };
    out.hybrid = byMeaning();
    log('search by meaning at 100k done');
    // The same with the larger model's vectors (768 dimensions, twice the small model's): its index
    // made again, as choosing that model in Storage does.
    bench.use_model('all-mpnet-base-v2');
    out.hybrid_large = byMeaning();
    log('search by meaning at 100k, larger vectors, done');
    out.context = assemblies(bench, windows, contextReps);
    bench.close();
    return out;
  },

  /** A fresh worker opens the 100k archive, resumes a 10k-turn session, browses; wasm memory after. */
  async resume({ reps = 20, pages = 10 }) {
    const memory_at_start = w.wasm_memory_bytes();
    const t = performance.now();
    const bench = new w.Bench('archive.db', SEED);
    const open_ms = performance.now() - t;
    bench.adopt_sessions();
    const first = bench.resume(0, 50);
    const ms = [first[0]];
    for (let r = 1; r < reps; r++) ms.push(bench.resume(0, 50)[0]);
    const reopen = [];
    for (let r = 0; r < 5; r++) reopen.push(bench.reopen() + bench.resume(0, 50)[0]);
    const browse_ms = bench.browse(pages);
    const out = {
      open_ms, first_resume_ms: first[0], turns: first[1], ms, reopen_and_resume_ms: reopen, browse_ms,
      memory_at_start, memory_after_browse: w.wasm_memory_bytes(), turns_total: bench.turn_total(),
      sqlite: w.sqlite_version(),
    };
    bench.close();
    return out;
  },

  /** Device A: the search phase's 100k-turn archive turns sync on (everything queued once) and sends it
   *  all to a fresh space on the loopback NATS server. */
  async sync_upload(o) {
    const S = await syncModule();
    const a = new w.Bench('archive.db', SEED);
    const queue_ms = a.enable_sync();
    let t = performance.now();
    const { connection, space } = await openSpace(S, o, 'bench-a', true);
    const open_ms = performance.now() - t;
    t = performance.now();
    let messages = 0;
    for (let n; (n = await publishBatch(a, space)); ) messages += n;
    const upload_ms = performance.now() - t;
    const turns = a.turn_total();
    a.close();
    await space.close();
    await connection.close();
    return { queue_ms, open_ms, upload_ms, messages, turns };
  },

  /** The search phase's archive (`sessions` × `perSession` turns) without its searches: for a run of
   *  the first-sync rows alone (`run.mjs --first-sync-only`). */
  async seed_archive({ sessions = 10, perSession = 10000 }) {
    w.remove_archive('archive.db');
    const bench = new w.Bench('archive.db', SEED);
    for (let s = 0; s < sessions; s++) bench.seed_session(perSession);
    const turns = bench.turn_total();
    bench.close();
    return { turns };
  },

  /** The first sync's floor in this browser: decrypting `messages` AES-GCM messages of about the
   *  size the first sync reads (WebCrypto, as the transport does), 256 at once as a pull of the
   *  transport's is, and one after another as it was before. */
  async sync_decrypt_floor({ messages = 100000, size = 700 }) {
    const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
    const plain = new Uint8Array(size).fill(97);
    const sealed = [];
    for (let i = 0; i < 256; i++) {
      const iv = crypto.getRandomValues(new Uint8Array(12));
      sealed.push({ iv, data: new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, plain)) });
    }
    const open = (m) => crypto.subtle.decrypt({ name: 'AES-GCM', iv: m.iv }, key, m.data);
    let t = performance.now();
    for (let done = 0; done < messages; done += 256) await Promise.all(sealed.map(open));
    const together_ms = performance.now() - t;
    t = performance.now();
    for (let done = 0; done < messages / 10; done++) await open(sealed[done % 256]);
    const one_by_one_ms = (performance.now() - t) * 10;
    return { messages, size, together_ms, one_by_one_ms };
  },

  /** Device B, empty, in a fresh worker (so the wasm memory is its own): opens the space with the
   *  passphrase and applies it whole, `batch` messages a transaction (2,000, as the storage worker does). */
  async sync_first({ batch = 2000, ...o }) {
    const S = await syncModule();
    w.remove_archive('sync-b.db');
    const b = new w.Bench('sync-b.db', SEED + 1);
    b.join_sync('bench-b');
    const memory_at_start = w.wasm_memory_bytes();
    const t = performance.now();
    const { connection, space } = await openSpace(S, o, 'bench-b');
    const open_ms = performance.now() - t;
    let applied = 0, apply_ms = 0, empty = 0;
    const after = { seq: 0 };
    while (empty < 2) {
      const [n, ms] = await applyBatch(b, space, after, batch);
      [applied, apply_ms, empty] = [applied + n, apply_ms + ms, n ? 0 : empty + 1];
    }
    const first_sync_ms = performance.now() - t;
    const result = { batch, open_ms, first_sync_ms, apply_ms, applied, stream_messages: after.seq, turns: b.turn_total(), memory_at_start, memory: w.wasm_memory_bytes() };
    b.close();
    await space.close();
    await connection.close();
    return result;
  },

  /** Two fresh devices for a latency run in a fresh space (when the upload phases did not make them,
   *  or for another server): A (`a`) with a session of `turns` turns, sent; B (`b`) empty, caught up. */
  async sync_seed({ a = 'archive.db', b = 'sync-b.db', turns = 200, ...o }) {
    const S = await syncModule();
    for (const name of [a, b]) w.remove_archive(name);
    const A = new w.Bench(a, SEED + 2);
    A.seed_session(turns);
    A.enable_sync();
    const B = new w.Bench(b, SEED + 3);
    B.join_sync('bench-b');
    const [da, db] = [await openSpace(S, o, 'bench-a', true), await openSpace(S, o, 'bench-b')];
    while (await publishBatch(A, da.space)) {}
    const after = { seq: 0 };
    while ((await applyBatch(B, db.space, after))[0]) {}
    for (const d of [da, db]) { await d.space.close(); await d.connection.close(); }
    const out = { turns: A.turn_total(), received: B.turn_total() };
    A.close();
    B.close();
    return out;
  },

  /** Device to device: A appends a turn now and then; both run the storage worker's rounds (publish,
   *  read, apply, at its cadence); the time from A's append to B having the turn, `reps` times. With
   *  `push` (the worker now) a round reads by push and a write or an arrival ends the wait between
   *  rounds; without, every round fetches and waits out the cadence (the worker before issue #34,
   *  and its fallback after a gap). */
  async sync_latency({ reps = 50, a: aName = 'archive.db', b: bName = 'sync-b.db', push = true, ...o }) {
    const S = await syncModule();
    const a = new w.Bench(aName, SEED + 2);
    a.adopt_sessions();
    const b = new w.Bench(bName, SEED + 3);
    const [A, B] = [await openSpace(S, o, 'bench-a'), await openSpace(S, o, 'bench-b')];
    let running = true;
    const received = { count: 0, at: 0 }; // B's messages from A, and when the last batch was applied
    // A round the server failed (a cluster's consumer not ready yet, say) is tried again after the idle
    // wait, as the storage worker does; how many there were is part of the result.
    const failures = [];
    const device = async (bench, space, arrivals, waker = {}) => {
      const next = cadence();
      const read = { seq: 0, follower: null };
      while (running) {
        let [sent, got] = [0, 0];
        try {
          sent = await publishBatch(bench, space);
          [got] = push ? await receiveBatch(bench, space, read) : await applyBatch(bench, space, read);
        } catch (err) {
          if (err?.kind !== 'server' && err?.kind !== 'unreachable') throw err;
          failures.push(err.message);
        }
        if (got && arrivals) Object.assign(arrivals, { count: arrivals.count + got, at: performance.now() });
        await (push ? roundWait(next(sent + got > 0), read.follower, waker) : sleep(next(sent + got > 0)));
      }
      await read.follower?.stop();
    };
    // B catches up first (the turns the latency phase of an earlier run left), then A starts writing.
    const catchUp = { seq: 0 };
    while ((await applyBatch(b, B.space, catchUp))[0]) {}
    const writes = {}; // A's writes wake its rounds, as the hub wakes the worker's sync after a write
    const loops = [device(a, A.space, null, writes), device(b, B.space, received)];
    const ms = [];
    try {
      for (let i = 0; i < reps; i++) {
        await sleep(300 + Math.random() * 500);
        const want = received.count + 1;
        a.prepare_turn();
        a.append_prepared();
        const t = performance.now();
        if (push) wake(writes);
        while (received.count < want) {
          if (performance.now() - t > 10_000) throw new Error('a turn did not arrive within 10 s');
          await sleep(1);
        }
        ms.push(received.at - t);
      }
    } finally {
      running = false;
      await Promise.all(loops);
    }
    for (const d of [A, B]) { await d.space.close(); await d.connection.close(); }
    a.close();
    b.close();
    return { ms, push, failures: failures.length, failure: failures[0] ?? null };
  },

  async cleanup() {
    w.remove_archive('archive.db');
    w.remove_archive('append.db');
    w.remove_archive('sync-b.db');
    for (const name of ['single-a.db', 'single-b.db', 'cluster-a.db', 'cluster-b.db']) w.remove_archive(name);
    return true;
  },
};

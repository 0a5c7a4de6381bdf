// The semantic-recall worker: a module worker the storage worker starts when the user turns semantic
// recall on (never at app start). It downloads the sentence-embedding model once, keeps it in the
// origin private file system (OPFS), and embeds texts with the Rust embedder (semantic/, compiled to
// wasm next to this file by scripts/semantic.sh, twice: semantic.js + semantic_bg.wasm with SIMD128, and
// semantic_relaxed.js + semantic_relaxed_bg.wasm also with relaxed SIMD, whose 8-bit dot product makes
// the model's dense layers faster; the second is used where the browser validates relaxed SIMD).
//
// Protocol (plain objects through postMessage; replies carry the request's id):
//   {type:"load", id, base_url:"…/", model:"all-MiniLM-L6-v2" | "all-mpnet-base-v2"}
//     → {type:"progress", id, loaded, total}*   (bytes, while downloading; total 0 if unknown)
//     → {type:"loaded", id, from_cache, load_ms, dims:384|768, runtime:"semantic"|"semantic_relaxed"}
//       | {type:"error", id, message}
//     A worker runs one model; the first download of one removes the other's copy from OPFS.
//   {type:"embed", id, texts:[string…], query?:true}
//     → {type:"vectors", id, dims, vectors: Float32Array(texts.length * dims), words?:[string…]}
//       | {type:"error", id, message}
//     With `query`, the texts are search queries: `words` gives each without its stop words, for the
//     words part of the search (semantic/src/query.rs; the list lives here, not in the storage worker).
// Messages are handled one at a time, in order, so an embed sent right after a load waits for it.
// A load may also carry `max_batch` (texts per forward pass, default 2; for measurements).

/** A module of one relaxed-SIMD instruction (`i32x4.relaxed_dot_i8x16_i7x16_add_s` on three zero
 *  vectors): valid only where the browser has relaxed SIMD. */
function relaxedSimd() {
  const zero = new Array(16).fill(0);
  const body = [0x00, ...[0, 1, 2].flatMap(() => [0xfd, 0x0c, ...zero]), 0xfd, 0x93, 0x02, 0x0b];
  const header = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, 0x03, 0x02, 0x01, 0x00];
  return WebAssembly.validate(new Uint8Array([...header, 0x0a, body.length + 2, 0x01, body.length, ...body]));
}

/** Which build of the embedder this browser runs. */
const RUNTIME = relaxedSimd() ? 'semantic_relaxed' : 'semantic';
// Fetched and compiled on the first load, not before.
let runtime = null;

const MODELS = ['all-MiniLM-L6-v2', 'all-mpnet-base-v2'];
const FILES = ['config.json', 'tokenizer.json', 'model.safetensors'];
// Written after all the files, with their sizes: a file counts as cached only if it is listed here
// with its current size, so an interrupted download is never taken for a complete one.
const MANIFEST = 'complete.json';
const PROGRESS_EVERY_MS = 100;

let embedder = null;
let loadedModel = null;
let queue = Promise.resolve();

self.onmessage = (event) => {
  const msg = event.data ?? {};
  queue = queue.then(() => handle(msg)).catch((e) => reply({ type: 'error', id: msg.id, message: String(e?.message ?? e) }));
};

function reply(msg, transfer = []) {
  self.postMessage(msg, transfer);
}

async function handle(msg) {
  switch (msg.type) {
    case 'load':
      return load(msg);
    case 'embed':
      return embed(msg);
    default:
      return reply({ type: 'error', id: msg.id, message: `Unknown message type ${JSON.stringify(msg.type)}: expected "load" or "embed".` });
  }
}

async function load({ id, base_url: baseUrl, model, max_batch: maxBatch }) {
  const started = performance.now();
  if (!MODELS.includes(model)) {
    return reply({ type: 'error', id, message: `Unknown embedding model ${JSON.stringify(model)}: this worker runs ${MODELS.join(' or ')}.` });
  }
  if (typeof baseUrl !== 'string' || !baseUrl.endsWith('/') || !URL.canParse(baseUrl)) {
    return reply({ type: 'error', id, message: `The model URL ${JSON.stringify(baseUrl)} must be an absolute URL ending with "/". Check the model URL in Settings.` });
  }
  if (embedder && loadedModel !== model) {
    return reply({ type: 'error', id, message: `This worker already runs ${loadedModel}: start another for ${model}.` });
  }
  if (embedder) {
    if (Number.isInteger(maxBatch) && maxBatch > 0) embedder.setMaxBatch(maxBatch);
    return reply({ type: 'loaded', id, from_cache: true, load_ms: performance.now() - started, dims: embedder.dims(), runtime: RUNTIME });
  }
  runtime ??= import(`./${RUNTIME}.js`);
  const wasm = runtime.then((m) => m.default()).catch((e) => {
    runtime = null;
    throw new Error(`Could not start the embedding model (${RUNTIME}_bg.wasm): ${e?.message ?? e}. Reload the page; if it persists, turn semantic recall off and on again.`);
  });
  wasm.catch(() => {}); // awaited below; a download error may come first
  const dir = await modelDir(model);
  let files = dir && (await readCached(dir));
  const fromCache = Boolean(files);
  if (!files) {
    files = await download(id, baseUrl, dir);
    await forgetOthers(model);
  }
  await wasm;
  try {
    const { SemanticEmbedder } = await runtime;
    embedder = new SemanticEmbedder(files[0], files[1], files[2]);
    loadedModel = model;
  } catch (e) {
    if (fromCache && dir) await forget(dir); // a damaged copy: the next load downloads it again
    const where = fromCache ? 'The cached model was damaged and has been removed; load it again to download it anew' : `The files at ${baseUrl} are not a usable ${model}. Check the model URL in Settings`;
    throw new Error(`${where} (${e?.message ?? e}).`);
  }
  if (Number.isInteger(maxBatch) && maxBatch > 0) embedder.setMaxBatch(maxBatch);
  reply({ type: 'loaded', id, from_cache: fromCache, load_ms: performance.now() - started, dims: embedder.dims(), runtime: RUNTIME });
}

async function embed({ id, texts, query }) {
  if (!embedder) {
    return reply({ type: 'error', id, message: 'The embedding model is not loaded yet: send a "load" message first (turn semantic recall on in Settings).' });
  }
  if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) {
    return reply({ type: 'error', id, message: 'An "embed" message needs texts: an array of strings.' });
  }
  let vectors;
  try {
    vectors = new Float32Array(embedder.embed(texts));
  } catch (e) {
    throw new Error(`Could not embed the texts: ${e?.message ?? e}`);
  }
  const { queryWords } = await runtime;
  const words = query ? { words: texts.map((t) => queryWords(t)) } : {};
  reply({ type: 'vectors', id, dims: embedder.dims(), vectors, ...words }, [vectors.buffer]);
}

/** models/<model>/ in OPFS, or null where OPFS is unavailable (then every load downloads). */
async function modelDir(model) {
  try {
    const root = await navigator.storage.getDirectory();
    const models = await root.getDirectoryHandle('models', { create: true });
    return await models.getDirectoryHandle(model, { create: true });
  } catch {
    return null;
  }
}

/** The three files from OPFS if all are there and complete, else null. */
async function readCached(dir) {
  try {
    const manifest = JSON.parse(await (await (await dir.getFileHandle(MANIFEST)).getFile()).text());
    const files = [];
    for (const name of FILES) {
      const file = await (await dir.getFileHandle(name)).getFile();
      if (file.size !== manifest[name]) return null;
      files.push(new Uint8Array(await file.arrayBuffer()));
    }
    return files;
  } catch {
    return null; // no manifest or a missing file: not cached
  }
}

async function forget(dir) {
  for (const name of [MANIFEST, ...FILES]) await dir.removeEntry(name).catch(() => {});
}

/** Removes the other models' copies from OPFS: one model is in use at a time, and the larger is 438 MB. */
async function forgetOthers(model) {
  try {
    const models = await (await navigator.storage.getDirectory()).getDirectoryHandle('models');
    for (const other of MODELS.filter((m) => m !== model)) await models.removeEntry(other, { recursive: true }).catch(() => {});
  } catch {
    // no OPFS: nothing kept
  }
}

/** Fetches the three files (together, so the total size is known from the start), reporting progress,
 * and stores them in `dir` (if any); resolves to their bytes. */
async function download(id, baseUrl, dir) {
  const responses = await Promise.all(
    FILES.map(async (name) => {
      const url = new URL(name, baseUrl).href;
      let response;
      try {
        response = await fetch(url, { cache: 'no-store' });
      } catch (e) {
        throw new Error(`Could not download the model from ${url}: ${e?.message ?? e}. Check your connection and the model URL in Settings.`);
      }
      if (!response.ok) {
        throw new Error(`Could not download the model from ${url}: HTTP ${response.status}. Check the model URL in Settings.`);
      }
      return { name, url, response, size: Number(response.headers.get('Content-Length')) || 0 };
    }),
  );
  const total = responses.every((r) => r.size > 0) ? responses.reduce((sum, r) => sum + r.size, 0) : 0;
  let loaded = 0;
  let lastReport = 0;
  const progress = (force) => {
    const now = performance.now();
    if (force || now - lastReport >= PROGRESS_EVERY_MS) {
      lastReport = now;
      reply({ type: 'progress', id, loaded, total });
    }
  };
  progress(true);
  if (dir) await forget(dir);
  const files = [];
  for (const { name, url, response } of responses) {
    const chunks = [];
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        loaded += value.byteLength;
        progress(false);
      }
    } catch (e) {
      throw new Error(`Could not download the model from ${url}: the connection broke off (${e?.message ?? e}). Try again.`);
    }
    const bytes = concat(chunks);
    files.push(bytes);
    if (dir) await store(dir, name, bytes);
  }
  progress(true);
  if (dir) {
    const sizes = Object.fromEntries(FILES.map((name, i) => [name, files[i].byteLength]));
    await store(dir, MANIFEST, new TextEncoder().encode(JSON.stringify(sizes)));
  }
  return files;
}

function concat(chunks) {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** Writes a file to OPFS; a failure (e.g. no quota) only means the next load downloads again. */
async function store(dir, name, bytes) {
  try {
    const handle = await (await dir.getFileHandle(name, { create: true })).createSyncAccessHandle();
    try {
      handle.truncate(0);
      handle.write(bytes, { at: 0 });
      handle.flush();
    } finally {
      handle.close();
    }
  } catch (e) {
    console.warn(`semantic worker: could not keep ${name} in OPFS (${e?.message ?? e}); it will be downloaded again next time`);
  }
}

// Measures the semantic-recall worker (dist/semantic/) in headless Chromium: the first load (download
// from the dev server's /models/, into OPFS), a second load in a new worker (from OPFS), the reference
// vector of "hello world", a clear error for a wrong model URL, and embedding throughput on realistic
// chat turns (semantic/bench/turns.txt) at several message and forward-pass batch sizes, in one worker
// and in two side by side, and how long a search's query takes to embed (semantic/bench/questions.txt,
// one at a time, as a search asks), alone and while turns are being indexed in batches of 8 to 1; last,
// the embedder's builds side by side (floats, 8-bit with SIMD128, 8-bit with relaxed SIMD).
//   node tests/e2e/semantic-bench.js        (after a build: scripts/semantic-bench.sh does both)
// Needs the dev server built (target/debug/cowork-dev-server or COWORK_DEV_SERVER) and the model
// installed (scripts/model.sh). COWORK_SEMANTIC_MODEL names the model (default all-MiniLM-L6-v2; or
// all-mpnet-base-v2). Prints one JSON object with the figures.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchBrowser } from './harness.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dist = process.env.COWORK_DIST ?? join(root, 'dist');
const models = process.env.COWORK_MODELS_DIR ?? join(root, 'target/models');
const serverBin = process.env.COWORK_DEV_SERVER ?? join(root, 'target/debug/cowork-dev-server');
const turns = readFileSync(join(root, 'semantic/bench/turns.txt'), 'utf8').trim().split('\n');
const questions = readFileSync(join(root, 'semantic/bench/questions.txt'), 'utf8').trim().split('\n');
const seconds = Number(process.env.BENCH_SECONDS ?? 6);
const model = process.env.COWORK_SEMANTIC_MODEL ?? 'all-MiniLM-L6-v2';

const server = spawn(serverBin, ['--dist', dist, '--models', models, '--addr', '127.0.0.1:0', '--exit-after', '900'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise((ok, fail) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    const m = out.match(/Cowork dev server: (http:\/\/\S+)/);
    if (m) ok(m[1]);
  });
  server.on('exit', (code) => fail(new Error(`dev server exited with ${code}`)));
});
const browser = await launchBrowser();
try {
  const page = await browser.context.newPage();
  page.on('console', (m) => m.type() === 'error' && console.error('page:', m.text()));
  await page.goto(url);
  const result = await page.evaluate(
    async ({ turns, questions, seconds, model }) => {
      const base = new URL(`models/${model}/`, location.href).href;
      let nextId = 1;
      const start = () => new Worker('/semantic/semantic-worker.js', { type: 'module' });
      const ask = (worker, msg, onProgress) =>
        new Promise((ok) => {
          const id = nextId++;
          const listen = ({ data }) => {
            if (data.id !== id) return;
            if (data.type === 'progress') return onProgress?.(data);
            worker.removeEventListener('message', listen);
            ok(data);
          };
          worker.addEventListener('message', listen);
          worker.postMessage({ ...msg, id });
        });
      const out = {};
      // A wrong URL: the error says what to do.
      const bad = start();
      out.wrong_url = await ask(bad, { type: 'load', base_url: new URL('models/nowhere/', location.href).href, model });
      out.embed_before_load = await ask(bad, { type: 'embed', texts: ['x'] });
      out.relative_url = await ask(bad, { type: 'load', base_url: `models/${model}/`, model });
      bad.terminate();
      // First load: downloads.
      let progress = [];
      const first = start();
      let t = performance.now();
      out.first_load = await ask(first, { type: 'load', base_url: base, model }, (p) => progress.push(p));
      out.first_load.wall_ms = performance.now() - t;
      out.first_load.progress_messages = progress.length;
      out.first_load.last_progress = progress.at(-1);
      first.terminate();
      // Second load, a new worker: from OPFS.
      const worker = start();
      progress = [];
      t = performance.now();
      out.second_load = await ask(worker, { type: 'load', base_url: base, model }, (p) => progress.push(p));
      out.second_load.wall_ms = performance.now() - t;
      out.second_load.progress_messages = progress.length;
      const hello = await ask(worker, { type: 'embed', texts: ['hello world', ''] });
      out.hello_world = { type: hello.type, dims: hello.dims, length: hello.vectors?.length, first: Array.from(hello.vectors?.slice(0, 5) ?? []) };
      await ask(worker, { type: 'embed', texts: turns.slice(0, 8) }); // warm up
      const percentiles = (list) => {
        const ms = [...list].sort((a, b) => a - b);
        const at = (p) => +ms[Math.min(ms.length - 1, Math.floor(p * ms.length))].toFixed(1);
        return { queries: ms.length, p50_ms: at(0.5), p99_ms: at(0.99), max_ms: +ms.at(-1).toFixed(1) };
      };
      const embedQuery = async (q) => {
        const t0 = performance.now();
        const r = await ask(worker, { type: 'embed', texts: [q] });
        if (r.type !== 'vectors' || r.vectors.length !== hello.dims) throw new Error(JSON.stringify(r));
        return performance.now() - t0;
      };
      // A search embeds its query alone: each question once to warm up, then three rounds, one by one.
      const idle = [];
      for (let round = 0; round < 4; round++) {
        for (const q of questions) {
          const ms = await embedQuery(q);
          if (round > 0) idle.push(ms);
        }
      }
      out.query = percentiles(idle);
      // While the archive is being indexed, a query waits for the batch the worker is embedding: the
      // same questions, a few hundred ms apart, while batches of `batch` turns go in back to back.
      out.query_while_indexing = [];
      for (const batch of [8, 4, 2, 1]) {
        let indexing = true;
        let indexed = 0;
        const t0 = performance.now();
        const loop = (async () => {
          for (let i = 0; indexing; i += batch) {
            const texts = turns.slice(i % turns.length, (i % turns.length) + batch);
            await ask(worker, { type: 'embed', texts });
            indexed += texts.length;
          }
        })();
        const waits = [];
        for (let k = 0; waits.length < 5 || performance.now() - t0 < seconds * 1000; k++) {
          await new Promise((ok) => setTimeout(ok, 150 + ((k * 137) % 300)));
          waits.push(await embedQuery(questions[k % questions.length]));
        }
        indexing = false;
        await loop;
        const turnsPerS = +(indexed / ((performance.now() - t0) / 1000)).toFixed(1);
        out.query_while_indexing.push({ batch, ...percentiles(waits), turns_per_s: turnsPerS });
      }
      out.throughput = [];
      // Texts a forward pass (the worker's max_batch; 16 and 32 were slower still) × turns a message,
      // each for `seconds` (at least one message: the larger model takes ~30 s for 32 turns).
      for (const maxBatch of [1, 2, 4, 8]) {
        await ask(worker, { type: 'load', base_url: base, model, max_batch: maxBatch });
        for (const batch of [8, 16, 32]) {
          let n = 0;
          t = performance.now();
          for (let i = 0; performance.now() - t < seconds * 1000; i += batch) {
            const texts = turns.slice(i % turns.length, (i % turns.length) + batch);
            const r = await ask(worker, { type: 'embed', texts });
            if (r.type !== 'vectors' || r.vectors.length !== texts.length * hello.dims) throw new Error(JSON.stringify(r));
            n += texts.length;
          }
          out.throughput.push({ message_batch: batch, max_batch: maxBatch, turns_per_s: +(n / ((performance.now() - t) / 1000)).toFixed(1) });
        }
      }
      // Two workers side by side (one per core here), each taking the next batch when it is free: what a
      // pool in the storage worker would give.
      const second = start();
      await ask(second, { type: 'load', base_url: base, model });
      await ask(worker, { type: 'load', base_url: base, model });
      out.two_workers = [];
      for (const batch of [8, 16, 32]) {
        let n = 0;
        t = performance.now();
        let next = 0;
        const run = async (w) => {
          while (performance.now() - t < seconds * 1000) {
            const texts = turns.slice(next % turns.length, (next % turns.length) + batch);
            next += batch;
            await ask(w, { type: 'embed', texts });
            n += texts.length;
          }
        };
        await Promise.all([run(worker), run(second)]);
        out.two_workers.push({ message_batch: batch, turns_per_s: +(n / ((performance.now() - t) / 1000)).toFixed(1) });
      }
      second.terminate();
      worker.terminate();
      // The embedder's builds side by side in this page, two texts a pass, one after another for
      // `seconds` each: the model in floats, then in 8-bit integers with SIMD128 and with relaxed SIMD
      // (scripts/semantic.sh; the worker above ran the relaxed one where the browser has it).
      const get = async (f) => new Uint8Array(await (await fetch(base + f)).arrayBuffer());
      const files = [await get('config.json'), await get('tokenizer.json'), await get('model.safetensors')];
      out.builds = {};
      for (const [name, build, floats] of [['floats', 'semantic', true], ['int8_simd128', 'semantic', false], ['int8_relaxed_simd', 'semantic_relaxed', false]]) {
        const module = await import(`/semantic/${build}.js`);
        try {
          await module.default();
        } catch (e) {
          out.builds[name] = `not run: ${e.message}`;
          continue;
        }
        const embedder = floats ? module.SemanticEmbedder.withFloats(...files) : new module.SemanticEmbedder(...files);
        embedder.embed(turns.slice(0, 2));
        let n = 0;
        t = performance.now();
        for (let i = 0; performance.now() - t < seconds * 1000; i += 2) {
          n += embedder.embed(turns.slice(i % turns.length, (i % turns.length) + 2)).length / hello.dims;
        }
        out.builds[name] = +(n / ((performance.now() - t) / 1000)).toFixed(1);
        embedder.free();
      }
      return out;
    },
    { turns, questions, seconds, model },
  );
  console.log(JSON.stringify(result, null, 2));
} finally {
  await browser.close();
  server.kill('SIGINT');
}

// Cowork's benchmark runner (spec §13): serves the bench page and its wasm on loopback, runs every phase
// in headless Chromium, measures cold start of the real app, prints one table and writes JSON.
//
//   node tests/bench/run.mjs --pkg DIR --dist DIR --server BIN [--out FILE] [--quick] [--stream-only]
//                            [--rounds N] [--only fresh,full] [--trace DIR]
//                            [--nats WS_URL] [--nats-cluster WS_URL,WS_URL,WS_URL] [--sync-only]
//                            [--first-sync-only] [--first-sync-batch N]
//                            [--phases append,attach,context,paste,mcp] [--no-paste] [--mcp URL]
//
// `--phases` runs only the phases named, for working on one figure: `append` (durable append beside its
// floors), `attach` (a turn with a 1 MB attachment, with its breakdown), `context` (context assembly on
// a fresh archive of one 10k-turn session instead of the search phase's 100k archive), `paste` (3 MB of
// text pasted into the app's composer, beside a plain textarea; paste.mjs). Nothing else runs. A run
// without `--phases` runs the paste rows after the store's (5 rounds; 1 with --quick) unless `--no-paste`.
// `--mcp URL` (server-everything's Streamable HTTP URL, which scripts/bench.sh starts) adds the MCP
// tool-call row (mcp.mjs: 40 calls, 5 with --quick) beside its floor; `--phases mcp` runs only it.
//
// `--nats` runs the sync phases against that server; `--nats-cluster` adds device-to-device latency
// through a cluster (its nodes' URLs; the space's stream on three of them) in the same run, beside the
// one server's; `--sync-only` runs only device-to-device latency, on small fresh archives (and counts
// the cold-start bytes); `--first-sync-only` (with `--nats`) only seeds the 100k-turn archive (no
// searches), sends it and times the first sync of an empty device (and counts the cold-start bytes);
// `--first-sync-batch N` times it again, N messages a transaction instead of the worker's 2,000.
// Latency is measured with the worker's rounds by push (a follower per space, a write or an arrival
// ending the wait) and, beside it in the same run, with every round fetching at the idle cadence (the
// worker before issue #34, and its fallback after a gap).
//
// `--stream-only` runs only the streaming benchmark (stream.mjs) and counts the cold-start bytes;
// `--rounds N` sets its rounds (3; 1 with --quick), `--only` its runs (floor, fresh, full), and
// `--trace DIR` records a Chrome trace of each measured stream into DIR with a summary of where the
// main thread's time went (tracing costs time itself: traced rounds are for reading, not for figures).
//
// Everything it starts stops by itself: the HTTP server and Chromium close at the end, and a watchdog
// ends the whole run after 20 minutes.
import { createServer } from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, readdirSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir, cpus, totalmem, release } from 'node:os';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { streamBench } from './stream.mjs';
import { pasteBench } from './paste.mjs';
import { mcpBench } from './mcp.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const require = createRequire(join(root, 'tests/e2e/package.json'));
const { chromium } = require('playwright-core');

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => {
    if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]?.startsWith('--') || all[i + 1] === undefined ? true : all[i + 1]]);
    return acc;
  }, []),
);
const PKG = resolve(args.pkg ?? join(root, 'target/bench-pkg'));
const DIST = resolve(args.dist ?? join(root, 'dist'));
const SERVER_BIN = resolve(args.server ?? join(root, 'target/debug/cowork-dev-server'));
const OUT = resolve(args.out ?? join(root, 'bench-results/bench-results.json'));
const QUICK = Boolean(args.quick); // a small run for checking the harness itself
const STREAM_ONLY = Boolean(args['stream-only']);
const SYNC_ONLY = Boolean(args['sync-only']);
const FIRST_SYNC_ONLY = Boolean(args['first-sync-only']);
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
// `--phases append,attach,context,paste,mcp`: only these (no 100k archive, no sync, streaming or cold start).
const PHASES = typeof args.phases === 'string' ? new Set(args.phases.split(',')) : null;

const watchdog = setTimeout(() => {
  console.error('bench: still running after 20 minutes; giving up');
  process.exit(2);
}, 20 * 60_000);
watchdog.unref();

// --- the query mix (the same as tests/bench/src/gen.rs QUERIES) -------------------------------------------
const QUERIES = [
  ['rare', ['zanzibar', 'quokka', 'marmalade', 'xylophone', 'kilimanjaro', 'pemberton']],
  ['common', ['the', 'error', 'function', 'token', 'session', 'the error']],
  ['phrase', ['"refresh token"', '"connection pool"', '"race condition"', '"rate limit"', '"memory leak"', '"stack trace"']],
  ['ident', ['refresh_token', 'src/auth.py', 'rotate_refresh_token_v2', 'ConnectionPool', 'next_page_token', 'db/pool.rs']],
];

// --- a loopback static server for the bench page, worker and wasm --------------------------------------
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm' };
function serve() {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (path === '/favicon.ico') {
      res.writeHead(204).end();
      return;
    }
    // The app's sync transport, for the sync phases.
    const sync = path === '/sync.js' && readdirSync(DIST).find((f) => /^sync-[0-9a-f]{16}\.js$/.test(f));
    const file = sync ? join(DIST, sync)
      : path.startsWith('/pkg/') ? join(PKG, path.slice(5)) : join(here, 'www', path === '/' ? 'index.html' : path.slice(1));
    if (file.includes('..') || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    // Cross-origin isolation gives performance.now() its fine resolution (5 µs instead of 100 µs).
    res.writeHead(200, {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-store',
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-embedder-policy': 'require-corp',
    });
    res.end(readFileSync(file));
  });
  server.keepAliveTimeout = 1000;
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

async function launch() {
  const profile = mkdtempSync(join(tmpdir(), 'cowork-bench-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-quic'],
  });
  return { context, close: async () => { await context.close(); rmSync(profile, { recursive: true, force: true }); } };
}

// --- statistics --------------------------------------------------------------------------------------------
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length))) - 1];
};
const p50 = (xs) => pct(xs, 50);
const p99 = (xs) => pct(xs, 99);

// --- the browser phases ------------------------------------------------------------------------------------

/** Device-to-device latency through the one server (in `space`, which the upload phases filled; fresh
 *  small archives when null) and, with `--nats-cluster`, through the cluster, one after the other. */
async function latencies(run, space) {
  const reps = QUICK ? 5 : 60;
  const passphrase = 'bench passphrase';
  const out = {};
  if (typeof args.nats === 'string') {
    let single = space;
    if (!single) {
      single = { url: args.nats, space: `bench${Date.now()}`, passphrase, a: 'single-a.db', b: 'single-b.db' };
      await run('sync_seed', single);
    }
    out.latency = await run('sync_latency', { ...single, reps });
    out.latency.fetching = await run('sync_latency', { ...single, reps, push: false });
  }
  if (typeof args['nats-cluster'] === 'string') {
    const cluster = {
      url: args['nats-cluster'].split(','), space: `benchc${Date.now()}`, passphrase, replicas: 3, a: 'cluster-a.db', b: 'cluster-b.db',
    };
    await run('sync_seed', cluster);
    out.cluster = { ...(await run('sync_latency', { ...cluster, reps })), nodes: cluster.url.length };
    out.cluster.fetching = await run('sync_latency', { ...cluster, reps, push: false });
  }
  return out;
}
async function browserPhases() {
  const server = await serve();
  const url = `http://127.0.0.1:${server.address().port}/`;
  const { context, close } = await launch();
  try {
    const page = await context.newPage();
    page.on('console', (m) => console.error(`  [${m.type()}] ${m.text()}`));
    page.on('pageerror', (e) => console.error(`  [page error] ${e.message}`));
    await page.goto(url);
    await page.waitForFunction(() => window.benchReady === true);
    const version = context.browser()?.version() ?? (await page.evaluate(() => navigator.userAgent));
    const run = async (name, options) => {
      const t = Date.now();
      console.error(`bench: ${name} …`);
      const r = await page.evaluate(([n, o]) => window.phase(n, o), [name, options]);
      console.error(`bench: ${name} took ${((Date.now() - t) / 1000).toFixed(1)} s`);
      return r;
    };
    if (FIRST_SYNC_ONLY && typeof args.nats === 'string') {
      await run('seed_archive', QUICK ? { sessions: 2, perSession: 1000 } : {});
      const space = { url: args.nats, space: `bench${Date.now()}`, passphrase: 'bench passphrase' };
      const sync = { upload: await run('sync_upload', space), first: await run('sync_first', space) };
      sync.decrypt = await run('sync_decrypt_floor', { messages: sync.first.applied });
      // The same stream applied N messages a transaction, beside the worker's 2,000.
      if (args['first-sync-batch']) sync.first_batched = await run('sync_first', { ...space, batch: Number(args['first-sync-batch']) });
      await run('cleanup', {});
      return { version, userAgent: await page.evaluate(() => navigator.userAgent), sync };
    }
    if (SYNC_ONLY) {
      const sync = await latencies(run, null);
      await run('cleanup', {});
      return { version, userAgent: await page.evaluate(() => navigator.userAgent), sync };
    }
    if (PHASES) {
      // Only the phases named (see the header): the store's rows without building the 100k archive.
      const out = { version, userAgent: await page.evaluate(() => navigator.userAgent) };
      if (PHASES.has('append')) out.append = await run('append', QUICK ? { iterations: 20, sizes: [200, 1000] } : { iterations: 200, sizes: [1000, 10000] });
      if (PHASES.has('attach')) out.attach = await run('attach', QUICK ? { turns: 100 } : {});
      if (PHASES.has('context')) {
        out.context = await run('context', { windows: [32768, 200000], ...(QUICK ? { perSession: 1000, contextReps: 3 } : {}) });
      }
      await run('cleanup', {});
      return out;
    }
    const append = await run('append', QUICK ? { iterations: 20, sizes: [200, 1000] } : { iterations: 200, sizes: [1000, 10000] });
    const attach = await run('attach', QUICK ? { turns: 100 } : {}); // 40 appends of 1 MB either way
    const search = await run('search', {
      queries: QUERIES,
      windows: [32768, 200000],
      ...(QUICK ? { sessions: 2, perSession: 1000, reps: 2, likeReps: 1, contextReps: 3 } : {}),
    });
    const resume = await run('resume', QUICK ? { reps: 3, pages: 2 } : {});
    // Sync (spec §14) through the NATS server bench.sh started on loopback: the 100k-turn archive sent
    // once, received whole by an empty device, then device-to-device latency.
    let sync = null;
    if (typeof args.nats === 'string') {
      const space = { url: args.nats, space: `bench${Date.now()}`, passphrase: 'bench passphrase' };
      sync = {
        upload: await run('sync_upload', space),
        first: await run('sync_first', space),
      };
      Object.assign(sync, await latencies(run, space));
    }
    await run('cleanup', {});
    return { version, userAgent: await page.evaluate(() => navigator.userAgent), append, attach, search, resume, sync };
  } finally {
    await close();
    await new Promise((ok) => server.close(ok));
  }
}

// --- cold start: bytes over the wire and time to first render of the real app ---------------------------
function wireBytes() {
  const files = readdirSync(DIST).filter((f) => /\.(js|wasm|html|css)$/.test(f) && f !== 'sw.js');
  const sizes = files.map((f) => {
    const raw = readFileSync(join(DIST, f));
    return { file: f, raw: raw.length, gzip: gzipSync(raw).length };
  });
  // The code highlighter is fetched the first time a code block shows (web/src/highlight.rs), the sync
  // transport when sync is turned on (web/src/worker/sync.rs): neither at start. The MCP client
  // (mcp-<hash>.js) is loaded by the storage worker only when an MCP server is configured: its own line.
  const isLazy = (f) => /^(highlight|sync)-[0-9a-f]{16}\.js$/.test(f);
  const isMcp = (f) => /^mcp-[0-9a-f]{16}\.js$/.test(f);
  const isCode = (f) => /\.(js|wasm)$/.test(f) && !isLazy(f) && !isMcp(f);
  const sum = (xs, k) => xs.reduce((a, x) => a + x[k], 0);
  // wasm-bindgen's inline snippets (snippets/<crate>-<hash>/inline<n>.js) are imported by the app's JS
  // at start: cold-start code too.
  const snippetsDir = join(DIST, 'snippets');
  const snippets = existsSync(snippetsDir)
    ? readdirSync(snippetsDir, { recursive: true }).filter((f) => String(f).endsWith('.js')).map((f) => {
      const raw = readFileSync(join(snippetsDir, f));
      return { file: `snippets/${f}`, raw: raw.length, gzip: gzipSync(raw).length };
    })
    : [];
  sizes.push(...snippets);
  const code = sizes.filter((s) => isCode(s.file));
  const lazy = sizes.filter((s) => isLazy(s.file));
  const mcp = sizes.filter((s) => isMcp(s.file));
  // Recall by meaning's worker (dist/semantic/), started only when the user turns it on; the model's
  // weights (about 91 MB) are downloaded then too, once, and are not counted here.
  const folder = (name) => {
    const dir = join(DIST, name);
    return existsSync(dir)
      ? readdirSync(dir).filter((f) => /\.(js|wasm)$/.test(f)).map((f) => {
        const raw = readFileSync(join(dir, f));
        return { file: `${name}/${f}`, raw: raw.length, gzip: gzipSync(raw).length };
      })
      : [];
  };
  const semantic = folder('semantic');
  // The importer of other tools' exports (dist/import/), loaded by the storage worker on an import's
  // first use (web/src/worker/importer.rs).
  const importer = folder('import');
  return {
    files: sizes, code_gzip: sum(code, 'gzip'), code_raw: sum(code, 'raw'), all_gzip: sum(sizes, 'gzip'),
    lazy_gzip: sum(lazy, 'gzip'), lazy_raw: sum(lazy, 'raw'), mcp_gzip: sum(mcp, 'gzip'), mcp_raw: sum(mcp, 'raw'),
    semantic_gzip: sum(semantic, 'gzip'), semantic_raw: sum(semantic, 'raw'),
    importer_gzip: sum(importer, 'gzip'), importer_raw: sum(importer, 'raw'),
  };
}

function startDevServer() {
  const child = spawn(SERVER_BIN, ['--dist', DIST, '--addr', '127.0.0.1:0', '--exit-after', '300'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const url = new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`dev server did not start in 20 s: ${stderr}`)), 20_000);
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/Cowork dev server: (http:\/\/\S+)/);
      if (m) { clearTimeout(timer); ok(m[1]); }
    });
    child.on('exit', (code) => fail(new Error(`dev server exited with ${code}: ${stderr}`)));
  });
  const stop = () => new Promise((ok) => {
    if (child.exitCode !== null) return ok();
    child.once('exit', ok);
    child.kill('SIGINT');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
  return { url, stop };
}

/** Loads the app in a fresh profile (nothing cached): first contentful paint, the app shell, archive ready. */
async function firstRender(runs) {
  const dev = startDevServer();
  const url = await dev.url;
  const out = [];
  try {
    for (let i = 0; i < runs; i++) {
      const { context, close } = await launch();
      try {
        await context.addInitScript(() => {
          const seen = {};
          window.__render = seen;
          new MutationObserver(() => {
            const s = document.querySelector('.storage-status');
            if (s && seen.shell === undefined) seen.shell = performance.now();
            if (s?.dataset.state === 'ready' && seen.ready === undefined) seen.ready = performance.now();
          }).observe(document, { subtree: true, childList: true, attributes: true });
        });
        const page = await context.newPage();
        await page.goto(url);
        await page.locator('.storage-status[data-state="ready"]').waitFor({ timeout: 30_000 });
        const r = await page.evaluate(() => ({
          fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null,
          shell: window.__render.shell,
          ready: window.__render.ready,
        }));
        out.push(r);
      } finally {
        await close();
      }
    }
  } finally {
    await dev.stop();
  }
  return out;
}

// --- the table --------------------------------------------------------------------------------------------
const ms = (x) => (x === undefined || x === null || Number.isNaN(x) ? '–' : x < 10 ? `${x.toFixed(2)} ms` : `${x.toFixed(1)} ms`);
const mb = (b) => `${(b / 1048576).toFixed(2)} MB`;
const times = (x) => `${x.toFixed(2)}×`;
const secs = (x) => `${(x / 1000).toFixed(1)} s`;

function buildRows(b, cold, stream) {
  const rows = [];
  // goal: { text, ratio, ok } – ratio = measured / goal (≤ 1 meets) or goal / measured for "faster than"
  const add = (group, name, value, peer, goal) => rows.push({ group, name, value, peer, ...goal });
  const within = (measured, limit, text) => ({ goal: text, ratio: measured / limit, met: measured <= limit });
  const atLeast = (measured, limit, text) => ({ goal: text, ratio: measured / limit, met: measured >= limit });
  if (b?.append || b?.attach || b?.search || b?.context) storeRows(b, add, within, atLeast);
  if (b?.paste) pasteRows(b.paste, add, within);
  if (b?.mcp) mcpRows(b.mcp, add);
  if (stream) streamRows(stream, add, within);
  if (cold) {
    add('cold start', 'app + worker + wasm, gzip', mb(cold.bytes.code_gzip), `raw ${mb(cold.bytes.code_raw)}`,
      within(cold.bytes.code_gzip, 1.5 * 1048576, '≤ 1.5 MB'));
    add('cold start', '  loaded later: code highlighter (first code block) + sync transport (sync on), gzip', mb(cold.bytes.lazy_gzip),
      `raw ${mb(cold.bytes.lazy_raw)}`, { goal: '(not at start)', ratio: null, met: null });
    add('cold start', '  loaded later: MCP client (an MCP server configured), gzip', mb(cold.bytes.mcp_gzip),
      `raw ${mb(cold.bytes.mcp_raw)}`, { goal: '(not at start)', ratio: null, met: null });
    add('cold start', '  loaded later: importer of other tools\' exports (first such import), gzip', mb(cold.bytes.importer_gzip),
      `raw ${mb(cold.bytes.importer_raw)}`, { goal: '(not at start)', ratio: null, met: null });
    add('cold start', '  loaded later: recall by meaning\'s model worker (when turned on), gzip', mb(cold.bytes.semantic_gzip),
      `raw ${mb(cold.bytes.semantic_raw)}; + the model, 91 MB, once`, { goal: '(not at start)', ratio: null, met: null });
    if (cold.render) {
      const shell = cold.render.map((x) => x.shell);
      add('cold start', 'time to first render (app shell), median of fresh loads', ms(p50(shell)),
        `FCP ${ms(p50(cold.render.map((x) => x.fcp)))}, archive ready ${ms(p50(cold.render.map((x) => x.ready)))}`, { goal: '(no goal)', ratio: null, met: null });
    }
  }
  if (b?.sync && !b.sync.upload) syncLatencyRows(b.sync, add);
  if (b?.sync?.upload) {
    const { upload: u, first: f } = b.sync;
    const rate = (x) => Math.round(x.applied / (x.apply_ms / 1000)).toLocaleString('en');
    add('sync', `send a ${u.turns.toLocaleString('en')}-turn archive once (${u.messages.toLocaleString('en')} changes)`, secs(u.upload_ms),
      `queueing ${ms(u.queue_ms)}, opening the space ${ms(u.open_ms)}`, { goal: '(shown)', ratio: null, met: null });
    add('sync', `first sync of ${f.turns.toLocaleString('en')} turns to an empty device`, secs(f.first_sync_ms),
      `reading ${secs(f.first_sync_ms - f.apply_ms - f.open_ms)}, applying ${secs(f.apply_ms)} (${rate(f)} turns/s, goal ≥ 5,000), opening ${ms(f.open_ms)}; ${(f.stream_messages ?? 0).toLocaleString('en')} stream messages (packs)`, within(f.first_sync_ms, 20_000, '≤ 20 s'));
    add('sync', '  wasm memory of that device after it', mb(f.memory), `at start ${mb(f.memory_at_start)}`,
      within(f.memory, 64 * 1048576, '≤ 64 MB'));
    const d = b.sync.decrypt;
    if (d) {
      add('sync', `  floor: WebCrypto opening ${d.messages.toLocaleString('en')} messages of ${d.size} B, 256 at once (were they sent one a change)`, secs(d.together_ms),
        `one after another ${secs(d.one_by_one_ms)}`, { goal: '(floor)', ratio: null, met: null });
    }
    const g = b.sync.first_batched;
    if (g) {
      add('sync', `  the same, ${g.batch.toLocaleString('en')} messages a transaction (${f.batch} above)`, secs(g.first_sync_ms),
        `applying ${secs(g.apply_ms)} (${rate(g)} turns/s), wasm memory ${mb(g.memory)}`, within(g.first_sync_ms, 20_000, '≤ 20 s'));
    }
    syncLatencyRows(b.sync, add);
  }
  if (b?.search) {
    const byMeaning = (h, model) => {
      if (!h) return;
      for (const [kind, list] of Object.entries(h.kinds)) {
        const words = b.search.at['100k']?.kinds[kind]?.fts ?? [];
        add('search', `search by words + meaning ${kind} at 100k${model} p50 / p99`, `${ms(p50(list))} / ${ms(p99(list))}`,
          `words alone ${ms(p50(words))} / ${ms(p99(words))}`, within(p99(list), 50, 'p99 ≤ 50 ms'));
      }
      add('search', `  ${h.vectors.toLocaleString('en')} vectors saved (100k turns) / first search reads them`,
        `${(h.index_ms / 1000).toFixed(1)} s / ${ms(h.first_ms)}`, `wasm memory ${(h.memory / 1048576).toFixed(0)} MB`, { goal: '(shown)', met: null });
    };
    byMeaning(b.search.hybrid, '');
    byMeaning(b.search.hybrid_large, ', 768-dim vectors (all-mpnet-base-v2)');
  const r = b.resume;
    add('memory', `wasm memory after opening + browsing ${r.turns_total} turns`, mb(r.memory_after_browse), `at start ${mb(r.memory_at_start)}`,
      within(r.memory_after_browse, 64 * 1048576, '< 64 MB'));
  }
  return rows;
}

/** The MCP row: a tool call's overhead in the page, beside the floor (a bare fetch of its request). */
function mcpRows(m, add) {
  add('mcp', `MCP tool call: from the model's call to the request leaving the page, p50 of ${m.app.length}`, ms(p50(m.app)),
    `floor (a bare fetch of the same request from the same page) ${ms(p50(m.floor))}; p99 ${ms(p99(m.app))}`,
    { goal: '(shown)', ratio: null, met: null });
}

/** The streaming rows: medians of the rounds, each beside its floor. */
function streamRows(s, add, within) {
  const med = (runs, k) => p50(runs.map((r) => r[k]));
  const [floor, fresh, full] = [med(s.floor, 'task_ms'), med(s.fresh, 'task_ms'), med(s.full, 'task_ms')];
  const parts = (runs) => `script ${ms(med(runs, 'script_ms'))}, layout ${ms(med(runs, 'layout_ms'))}, style ${ms(med(runs, 'style_ms'))}`;
  const none = { goal: '', ratio: null, met: null };
  if (s.floor.length) add('streaming', 'floor: the same deltas appended as text, main-thread busy', ms(floor), parts(s.floor), none);
  if (s.fresh.length) add('streaming', '12 KB Markdown reply, 1,500 deltas: busy, fresh session', ms(fresh), parts(s.fresh),
    s.floor.length ? within(fresh / floor, 1.5, '≤ 1.5× floor') : none);
  if (s.full.length) {
    const inView = Math.min(...s.full.map((r) => r.turns_in_view));
    add('streaming', `  the same with ${inView} turns in view`, ms(full), parts(s.full),
      s.fresh.length ? within(full / fresh, 1.1, '≤ 1.1× fresh session') : none);
  }
  if (s.fresh.length && s.full.length) {
    add('streaming', '  reply drawn after the last delta was sent, fresh / full', `${ms(med(s.fresh, 'drawn_after_end_ms'))} / ${ms(med(s.full, 'drawn_after_end_ms'))}`,
      s.floor.length ? `floor ${ms(med(s.floor, 'drawn_after_end_ms'))}` : '', within(Math.max(med(s.fresh, 'drawn_after_end_ms'), med(s.full, 'drawn_after_end_ms')), 100, '≤ 100 ms'));
  }
}

/** The device-to-device rows: through the one server and, beside it, through the cluster. */
function syncLatencyRows({ latency: l, cluster: c }, add) {
  const goal = (x) => ({ goal: 'p50 ≤ 50 ms, p99 ≤ 200 ms', ratio: p50(x.ms) / 50, met: p50(x.ms) <= 50 && p99(x.ms) <= 200 });
  const retried = (x) => (x.failures ? `; ${x.failures} rounds tried again (${x.failure})` : '');
  const fetching = (x) => (x.fetching ? `rounds fetching (before #34), same run: ${ms(p50(x.fetching.ms))} / ${ms(p99(x.fetching.ms))}${retried(x.fetching)}` : '');
  if (l) {
    add('sync', `device → device on loopback, one server, the worker's rounds by push, p50 / p99 (${l.ms.length})`, `${ms(p50(l.ms))} / ${ms(p99(l.ms))}`,
      `${fetching(l) || 'append → on the other device'}${retried(l)}`, goal(l));
  }
  if (c) {
    add('sync', `device → device on loopback, ${c.nodes}-node cluster (stream on 3), by push, p50 / p99 (${c.ms.length})`, `${ms(p50(c.ms))} / ${ms(p99(c.ms))}`,
      `${fetching(c)}${retried(c)}`, goal(c));
  }
}

function storeRows(b, add, within, atLeast) {
  if (b.append) appendRows(b.append, add, within, atLeast);
  if (b.attach) {
    const a = b.attach;
    const mb = (a.bytes / (1024 * 1024)).toFixed(0);
    const s = p50(a.store), f = p50(a.floor);
    add('append', `append a turn with a ${mb} MB attachment p50 / p99`, `${ms(s)} / ${ms(p99(a.store))}`,
      `raw OPFS write+flush of the same bytes ${ms(f)} / ${ms(p99(a.floor))}`, within(s / f, 5, 'p50 ≤ 5× floor'));
    if (a.call?.length) {
      // Where the time goes: each part timed alone (Bench::attach_parts), on a new content each time.
      add('append', '  the same call timed from JS (+ the bytes copied into wasm memory)', `${ms(p50(a.call))} / ${ms(p99(a.call))}`, '',
        { goal: '(breakdown)', ratio: null, met: null });
      if (a.digest?.length) {
        add('append', '  part: SHA-256 by WebCrypto (as the storage worker hashes), alone', `${ms(p50(a.digest))} / ${ms(p99(a.digest))}`, '',
          { goal: '(breakdown)', ratio: null, met: null });
      }
      add('append', `  part: ${a.digest?.length ? 'classify' : 'SHA-256 + classify'}, alone`, `${ms(p50(a.hash))} / ${ms(p99(a.hash))}`, '',
        { goal: '(breakdown)', ratio: null, met: null });
      add('append', '  part: blob insert (into the page cache), alone', `${ms(p50(a.insert))} / ${ms(p99(a.insert))}`, '',
        { goal: '(breakdown)', ratio: null, met: null });
      add('append', '  part: its commit (WAL frames + flush), alone', `${ms(p50(a.commit))} / ${ms(p99(a.commit))}`, '',
        { goal: '(breakdown)', ratio: null, met: null });
      add('append', '  floor written as the WAL writes it: 2 writes per 4 KiB page, one flush', `${ms(p50(a.paged))} / ${ms(p99(a.paged))}`, '',
        { goal: '(breakdown)', ratio: p50(a.paged) / f, met: null, note: '× floor' });
    }
  }
  if (b.search) searchRows(b, add, within, atLeast);
  const context = b.search?.context ?? b.context;
  for (const [window, c] of Object.entries(context ?? {})) {
    const where = b.search ? '' : ' (alone in its archive)';
    add('context', `context assembly, 10k-turn session${where}, ${Number(window).toLocaleString('en')}-token window p50 / p99`,
      `${ms(p50(c.ms))} / ${ms(p99(c.ms))}`, `a new turn or a streamed reply before each; ${c.turns_read} turns read, ${c.messages} messages`, within(p50(c.ms), 5, 'p50 ≤ 5 ms'));
    if (c.first_ms !== undefined) {
      add('context', '  the session\'s first assembly after opening the archive (no turns kept yet)', ms(c.first_ms), '',
        { goal: '(breakdown)', ratio: null, met: null });
    }
  }
}

function appendRows(append, add, within, atLeast) {
  const sizes = Object.keys(append.sizes).map(Number).sort((x, y) => x - y);
  const [small, large] = [sizes[0], sizes[sizes.length - 1]];
  for (const size of sizes) {
    const a = append.sizes[size];
    const s = p50(a.store);
    add('append', `durable append p50 / p99 at ${size} turns`, `${ms(s)} / ${ms(p99(a.store))}`, '', { goal: '', ratio: null, met: null });
    // The floor a SQLite commit cannot go under on the pool: a journal write + flush, then a database
    // write + flush, whole pages (worker.js openFloor). The single write + flush stays as a line.
    add('append', `  commit floor: journal page write+flush, then database page write+flush (${size})`,
      `${ms(p50(a.commit_floor))} / ${ms(p99(a.commit_floor))}`, '', within(s / p50(a.commit_floor), 1.5, 'append p50 ≤ 1.5× commit floor'));
    add('append', `  raw floor: OPFS write+flush (${size})`, `${ms(p50(a.floor))} / ${ms(p99(a.floor))}`, '',
      { goal: '(shown)', ratio: s / p50(a.floor), met: null, note: '× floor' });
    add('append', `  IndexedDB put, strict (${size})`, `${ms(p50(a.idb_strict))} / ${ms(p99(a.idb_strict))}`, '',
      within(s / p50(a.idb_strict), 2, 'append p50 ≤ 2× strict put'));
    add('append', `  whole-conversation IDB put (${size})`, `${ms(p50(a.idb_whole))} / ${ms(p99(a.idb_whole))}`, '',
      size === large ? atLeast(p50(a.idb_whole) / s, 10, '≥ 10× faster than it') : { goal: '(shown)', ratio: p50(a.idb_whole) / s, met: null, note: 'faster by' });
  }
  const synced = append.sizes[large].synced;
  if (synced?.length) {
    const ratio = p50(synced) / p50(append.sizes[large].store);
    add('append', `  with sync on (outbox in the same transaction), p50 / p99 at ${large}`, `${ms(p50(synced))} / ${ms(p99(synced))}`,
      `sync on ÷ off ${times(ratio)}`, within(ratio, 1.1, 'sync on ≤ 1.1× off'));
  }
  const flat = p50(append.sizes[large].store) / p50(append.sizes[small].store);
  add('append', `append flat: p50 at ${large} / p50 at ${small}`, times(flat), '', within(flat, 1.25, 'flat (≤ 1.25×)'));
}

/** The paste rows (paste.mjs): the app's composer beside a plain textarea, medians of the rounds. */
function pasteRows(p, add, within) {
  const app = p.app.map((r) => r.painted_ms), floor = p.floor.map((r) => r.painted_ms);
  const mb = (p.chars / 1e6).toFixed(0);
  add('paste', `paste ${mb} MB of text into the composer, until painted, median of ${app.length}`, ms(p50(app)),
    `a plain textarea ${ms(p50(floor))}; input handled ${ms(p50(p.app.map((r) => r.handled_ms)))}` +
      (p.app.some((r) => r.file) ? `; attached as "${p.app.find((r) => r.file).file}"` : ''), within(p50(app), 500, '≤ 0.5 s'));
}

function searchRows(b, add, within, atLeast) {
  for (const label of Object.keys(b.search.at)) {
    const at = b.search.at[label];
    for (const [kind, r] of Object.entries(at.kinds)) {
      add('search', `search ${kind} at ${label} (${at.turns} turns) p50 / p99`, `${ms(p50(r.fts))} / ${ms(p99(r.fts))}`,
        `LIKE ${ms(p50(r.like))}`, within(p99(r.fts), 15, 'p99 ≤ 15 ms'));
    }
    const rare = at.kinds.rare;
    const speedup = p50(rare.like) / p50(rare.fts);
    add('search', `  rare: LIKE scan p50 / FTS p50 at ${label}`, times(speedup), '', atLeast(speedup, 50, '≥ 50× faster than LIKE'));
  }
  const r = b.resume;
  add('resume', `resume 10k-turn session (last ${r.turns} turns), first after open`, ms(r.first_resume_ms), `open ${ms(r.open_ms)}`,
    within(r.first_resume_ms, 100, '≤ 100 ms'));
  add('resume', `  reopen + resume p50 / warm resume p50`, `${ms(p50(r.reopen_and_resume_ms))} / ${ms(p50(r.ms))}`, '',
    within(p50(r.reopen_and_resume_ms), 100, '≤ 100 ms'));
}

function printTable(rows) {
  const fmtRatio = (r) => (r.ratio === null || r.ratio === undefined ? '' : times(r.ratio));
  const verdict = (r) => (r.met === true ? 'met' : r.met === false ? 'MISSED' : '');
  const cols = [
    ['figure', (r) => r.name],
    ['measured', (r) => r.value],
    ['beside', (r) => r.peer ?? ''],
    ['goal', (r) => r.goal ?? ''],
    ['ratio', fmtRatio],
    ['', verdict],
  ];
  const widths = cols.map(([h, f]) => Math.max(h.length, ...rows.map((r) => String(f(r)).length)));
  const line = (cells) => '| ' + cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ') + ' |';
  console.log(line(cols.map(([h]) => h)));
  console.log('|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|');
  for (const r of rows) console.log(line(cols.map(([, f]) => f(r))));
}

// --- main -------------------------------------------------------------------------------------------------
/** The streaming benchmark against the dev server, its floor page served by the bench's server. */
async function streamPhases() {
  const server = await serve();
  const dev = startDevServer();
  try {
    const devUrl = await dev.url;
    const floorUrl = `http://127.0.0.1:${server.address().port}/stream-floor.html`;
    const reps = Number(args.rounds ?? (QUICK ? 1 : 3));
    const only = typeof args.only === 'string' ? args.only.split(',') : ['floor', 'fresh', 'full'];
    const trace = typeof args.trace === 'string' ? resolve(args.trace) : null;
    return await streamBench({ launch, floorUrl, devUrl, reps, only, trace });
  } finally {
    await dev.stop();
    await new Promise((ok) => server.close(ok));
  }
}

/** The paste benchmark (paste.mjs) against the dev server, its floor page served by the bench's server. */
async function pastePhases() {
  const server = await serve();
  const dev = startDevServer();
  try {
    const floorUrl = `http://127.0.0.1:${server.address().port}/paste-floor.html`;
    return await pasteBench({ launch, floorUrl, devUrl: await dev.url, reps: QUICK ? 1 : 5 });
  } finally {
    await dev.stop();
    await new Promise((ok) => server.close(ok));
  }
}

/** The MCP tool-call row (mcp.mjs) against the dev server and server-everything at `--mcp URL`. */
async function mcpPhases() {
  const dev = startDevServer();
  try {
    return await mcpBench({ launch, devUrl: await dev.url, mcpUrl: args.mcp, reps: QUICK ? 5 : 40 });
  } finally {
    await dev.stop();
  }
}

const started = Date.now();
const storePhases = !PHASES || ['append', 'attach', 'context'].some((p) => PHASES.has(p));
let browser = STREAM_ONLY || !storePhases ? null : await browserPhases();
if ((PHASES ? PHASES.has('paste') : !STREAM_ONLY && !SYNC_ONLY && !FIRST_SYNC_ONLY) && !args['no-paste']) {
  console.error('bench: paste …');
  browser = { ...browser, paste: await pastePhases() };
}
if (typeof args.mcp === 'string' && (PHASES ? PHASES.has('mcp') : !STREAM_ONLY && !SYNC_ONLY && !FIRST_SYNC_ONLY)) {
  console.error('bench: MCP tool call …');
  browser = { ...browser, mcp: await mcpPhases() };
}
const stream = args['no-stream'] || SYNC_ONLY || FIRST_SYNC_ONLY || PHASES ? null : await streamPhases();
let cold = null;
if (!args['no-cold'] && !PHASES) {
  console.error('bench: cold start …');
  cold = { bytes: wireBytes(), render: STREAM_ONLY || SYNC_ONLY || FIRST_SYNC_ONLY ? null : await firstRender(QUICK ? 1 : 5) };
}
const rows = buildRows(browser, cold, stream);
const machine = { cpus: cpus().length, cpu: cpus()[0]?.model, memory_gb: Math.round(totalmem() / 2 ** 30), kernel: release() };
const store = browser?.resume ? `SQLite ${browser.resume.sqlite}, ` : '';
console.log(`\nCowork bench — ${store}${machine.cpus} × ${machine.cpu}, ${machine.memory_gb} GiB` +
  `${browser?.append ? `, journal_mode=${browser.append.journal_mode}` : ''}, ran ${((Date.now() - started) / 1000).toFixed(0)} s${QUICK ? ' (QUICK)' : ''}\n`);
printTable(rows);
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, JSON.stringify({ when: new Date().toISOString(), machine, chromium: browser?.version, quick: QUICK, rows, raw: { ...browser, stream, cold } }, null, 1));
console.log(`\nJSON: ${OUT}`);
process.exit(0);

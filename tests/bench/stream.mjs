// The streaming benchmark (issue #17): main-thread busy time while the real app streams a fixed 12 KB
// Markdown reply (the dev server's `[[bench:markdown]]`: 1,500 deltas, 4 ms apart), in a fresh session
// and with 200 turns in view, beside a page that only appends the same deltas as text (the floor,
// www/stream-floor.html); and how long after the stream's last delta the reply is drawn.
//
// Busy time is CDP `Performance.getMetrics` TaskDuration (the page's main thread) from just before the
// message is sent until 500 ms after the reply is drawn. "Drawn" is the first animation frame after
// the `bench-end:<ms>` paragraph (the server's clock when it sent the last delta) is in the DOM.

const SETTLE_MS = 500;
const TURNS_IN_VIEW = 200;

/** Watches the DOM for the reply's last paragraph; sets window.__bench = { end, seen, drawn }. */
function watchForEnd() {
  const now = () => performance.timeOrigin + performance.now();
  const found = (node) => {
    const text = node.nodeType === Node.TEXT_NODE ? node.data : node.textContent;
    const m = text && /bench-end:(\d+)/.exec(text);
    if (!m || window.__bench) return false;
    window.__bench = { end: Number(m[1]), seen: now() };
    requestAnimationFrame(() => (window.__bench.drawn = now()));
    return true;
  };
  const observer = new MutationObserver((records) => {
    for (const r of records) {
      const nodes = r.type === 'characterData' ? [r.target] : r.addedNodes;
      for (const n of nodes) if (found(n)) return observer.disconnect();
    }
  });
  const start = () => observer.observe(document.documentElement, { subtree: true, childList: true, characterData: true });
  if (document.documentElement) start();
  else document.addEventListener('DOMContentLoaded', start);
}

async function metrics(cdp) {
  const { metrics } = await cdp.send('Performance.getMetrics');
  return Object.fromEntries(metrics.map((m) => [m.name, m.value]));
}

// Trace categories of the main thread's work (layout, paint, style, script, scrolling, observers).
const TRACE_CATEGORIES = ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink', 'cc', 'v8.execute',
  'blink.user_timing', 'loading'];

/** When tracing (`--trace DIR`), where the next measured stream's trace goes, and its summary. */
let traceTo = null;

/** Runs `go` (which starts the stream) and measures until the reply is drawn and settled. */
async function measure(page, cdp, go) {
  const tracing = traceTo && (await startTrace(cdp));
  const before = await metrics(cdp);
  await go();
  await page.waitForFunction(() => window.__bench?.drawn, null, { timeout: 60_000, polling: 100 });
  await page.waitForTimeout(SETTLE_MS);
  const after = await metrics(cdp);
  if (tracing) await stopTrace(cdp, tracing);
  const b = await page.evaluate(() => window.__bench);
  const d = (k) => (after[k] - before[k]) * 1000;
  const all = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
  return { all, task_ms: d('TaskDuration'), script_ms: d('ScriptDuration'), layout_ms: d('LayoutDuration'),
    style_ms: d('RecalcStyleDuration'), drawn_after_end_ms: b.drawn - b.end, seen_after_end_ms: b.seen - b.end };
}

async function startTrace(cdp) {
  const chunks = [];
  cdp.on('Tracing.dataCollected', (e) => chunks.push(...e.value));
  const done = new Promise((ok) => cdp.once('Tracing.tracingComplete', ok));
  await cdp.send('Tracing.start', { traceConfig: { includedCategories: TRACE_CATEGORIES }, transferMode: 'ReportEvents' });
  return { chunks, done, file: traceTo };
}

async function stopTrace(cdp, { chunks, done, file }) {
  await cdp.send('Tracing.end');
  await done;
  const { writeFileSync } = await import('node:fs');
  writeFileSync(`${file}.json`, JSON.stringify({ traceEvents: chunks }));
  const summary = summarizeTrace(chunks);
  writeFileSync(`${file}.txt`, summary);
  console.error(`  trace: ${file}.json\n${summary}`);
}

/** Self time per event name on the page's main thread (complete events, nested by time), the top 40. */
function summarizeTrace(events) {
  const main = events.find((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain' &&
    events.some((x) => x.pid === e.pid && x.name === 'Layout'));
  const on = events.filter((e) => main && e.pid === main.pid && e.tid === main.tid && e.ph === 'X' && e.dur !== undefined)
    .sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const self = new Map();
  const count = new Map();
  const stack = [];
  let top = 0;
  for (const e of on) {
    while (stack.length && stack.at(-1).ts + stack.at(-1).dur <= e.ts) stack.pop();
    const parent = stack.at(-1);
    if (!parent) top += e.dur;
    if (parent) self.set(parent.name, (self.get(parent.name) ?? 0) - e.dur);
    self.set(e.name, (self.get(e.name) ?? 0) + e.dur);
    count.set(e.name, (count.get(e.name) ?? 0) + 1);
    stack.push(e);
  }
  const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)
    .map(([n, us]) => `    ${(us / 1000).toFixed(1).padStart(8)} ms  ${String(count.get(n)).padStart(6)}×  ${n}`);
  return `  main-thread self time by event (${on.length} events, ${(top / 1000).toFixed(0)} ms in top-level ones):\n${rows.join('\n')}\n`;
}

async function openPage(context, url) {
  await context.addInitScript(watchForEnd);
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error(`  [page error] ${e.message}`));
  await page.goto(url);
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable', { timeDomain: 'threadTicks' });
  return { page, cdp };
}

async function appReady(page) {
  await page.locator('.storage-status[data-state="ready"]').waitFor({ timeout: 30_000 });
}

async function replyDone(page) {
  await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 60_000 });
}

/** Sends the benchmark message in the open conversation, measured. */
async function sendMeasured(page, cdp) {
  const box = page.getByLabel('Message', { exact: true });
  await box.fill('bench [[bench:markdown]]');
  const r = await measure(page, cdp, () => box.press('Enter'));
  await replyDone(page);
  const shown = await page.locator('.turn[data-role="assistant"]').last().locator('.turn-text').innerHTML();
  return { ...r, reply_html_bytes: shown.length };
}

/** A JSONL archive of one session of `n` turns with Markdown replies, shaped like `sample` (an export). */
function archiveOf(sample, n) {
  const header = sample.find((l) => l.type === 'header');
  const session = sample.find((l) => l.type === 'session');
  const turn = sample.find((l) => l.type === 'turn');
  const id = crypto.randomUUID();
  const lines = [header, { ...session, id, title: `Bench session of ${n} turns`, turn_count: n, state: {} }];
  for (let i = 1; i <= n; i++) {
    const user = i % 2 === 1;
    const content = user
      ? `Question ${i}: how do we change \`limit_${i}\` in the pool?`
      : `### Answer ${i}\n\nSet \`limit_${i}\` in **src/pool.rs**, then:\n\n- run \`cargo test\`\n- check the *logs*\n\n` +
        '```rust\nlet pool = Pool::new(' + i + ');\npool.run()?;\n```\n\nThat keeps `retry` bounded.';
    lines.push({ ...turn, session_id: id, turn_number: i, role: user ? 'user' : 'assistant', content,
      token_count: Math.ceil(content.length / 4), created_at: session.created_at + i, metadata: {} });
  }
  lines.push({ type: 'end', sessions: 1, turns: n });
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

async function exportArchive(page) {
  const { readFile } = await import('node:fs/promises');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export', exact: true }).click(),
  ]);
  return (await readFile(await download.path(), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
}

/** The floor: the same stream appended as text. */
async function floorRun(launch, floorUrl, devUrl) {
  const { context, close } = await launch();
  try {
    const { page, cdp } = await openPage(context, floorUrl);
    await page.waitForFunction(() => window.benchReady === true);
    const endpoint = `${devUrl}v1/chat/completions`;
    const r = await measure(page, cdp, () => page.evaluate((e) => { window.stream(e); }, endpoint));
    return r;
  } finally {
    await close();
  }
}

/** The app in a fresh session. */
async function freshRun(launch, devUrl) {
  const { context, close } = await launch();
  try {
    const { page, cdp } = await openPage(context, devUrl);
    await appReady(page);
    await page.getByRole('button', { name: '+ New session' }).click();
    return await sendMeasured(page, cdp);
  } finally {
    await close();
  }
}

/** The app with 200 turns in view: an imported session, opened at its end. */
async function fullRun(launch, devUrl) {
  const { context, close } = await launch();
  try {
    const { page, cdp } = await openPage(context, devUrl);
    await appReady(page);
    await page.getByRole('button', { name: '+ New session' }).click();
    const box = page.getByLabel('Message', { exact: true });
    await box.fill('seed a message to copy the export shape from');
    await box.press('Enter');
    await replyDone(page);
    const archive = archiveOf(await exportArchive(page), TURNS_IN_VIEW);
    // The Storage panel's import (as tests/e2e/harness.js importFile): preview, then Import.
    await page.locator('.storage-usage').click();
    await page.getByLabel('Import files')
      .setInputFiles({ name: 'bench.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(archive) });
    await page.locator('.import-result', { hasText: '→ 1 session' }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.locator('.import-result', { hasText: 'Imported 1 session' }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Close' }).click();
    await page.locator('.session', { hasText: `Bench session of ${TURNS_IN_VIEW} turns` }).click();
    await page.locator(`.turn[data-turn="${TURNS_IN_VIEW}"]`).waitFor();
    // Opening loads the session's end; scrolling up brings in older turns until the window is full.
    for (let i = 0; i < 20; i++) {
      const shown = await page.locator('.turn').count();
      if (shown >= TURNS_IN_VIEW) break;
      await page.evaluate(() => { document.querySelector('.turns').scrollTop = 0; });
      await page.waitForTimeout(300);
    }
    await page.evaluate(() => { const l = document.querySelector('.turns'); l.scrollTop = l.scrollHeight; });
    await page.waitForTimeout(300);
    const inView = await page.locator('.turn').count();
    return { ...(await sendMeasured(page, cdp)), turns_in_view: inView };
  } finally {
    await close();
  }
}

/**
 * Runs floor, fresh session and 200 turns (those of `only`) `reps` times, interleaved; resolves to every
 * run's figures. With `trace` (a directory), each measured stream is traced there (see `summarizeTrace`).
 */
export async function streamBench({ launch, floorUrl, devUrl, reps, only = ['floor', 'fresh', 'full'], trace = null }) {
  const out = { floor: [], fresh: [], full: [] };
  const runs = { floor: () => floorRun(launch, floorUrl, devUrl), fresh: () => freshRun(launch, devUrl), full: () => fullRun(launch, devUrl) };
  if (trace) (await import('node:fs')).mkdirSync(trace, { recursive: true });
  for (let i = 0; i < reps; i++) {
    console.error(`bench: streaming, round ${i + 1} of ${reps} …`);
    for (const kind of Object.keys(runs).filter((k) => only.includes(k))) {
      traceTo = trace && `${trace}/${kind}-${i + 1}`;
      const r = await runs[kind]();
      console.error(`  ${kind}: busy ${r.task_ms.toFixed(0)} ms (script ${r.script_ms.toFixed(0)}, layout ${r.layout_ms.toFixed(0)}, ` +
        `style ${r.style_ms.toFixed(0)}), drawn ${r.drawn_after_end_ms.toFixed(0)} ms after the end`);
      out[kind].push(r);
    }
  }
  traceTo = null;
  return out;
}

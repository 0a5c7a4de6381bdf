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

/** Runs `go` (which starts the stream) and measures until the reply is drawn and settled. */
async function measure(page, cdp, go) {
  const before = await metrics(cdp);
  await go();
  await page.waitForFunction(() => window.__bench?.drawn, null, { timeout: 60_000, polling: 100 });
  await page.waitForTimeout(SETTLE_MS);
  const after = await metrics(cdp);
  const b = await page.evaluate(() => window.__bench);
  const d = (k) => (after[k] - before[k]) * 1000;
  const all = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
  return { all, task_ms: d('TaskDuration'), script_ms: d('ScriptDuration'), layout_ms: d('LayoutDuration'),
    style_ms: d('RecalcStyleDuration'), drawn_after_end_ms: b.drawn - b.end, seen_after_end_ms: b.seen - b.end };
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
    await page.locator('.storage-usage').click();
    await page.getByLabel('Import an exported archive (JSON Lines)')
      .setInputFiles({ name: 'bench.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(archive) });
    await page.locator('.import-result', { hasText: `with ${TURNS_IN_VIEW} turns` }).waitFor({ timeout: 60_000 });
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

/** Runs floor, fresh session and 200 turns `reps` times, interleaved; resolves to every run's figures. */
export async function streamBench({ launch, floorUrl, devUrl, reps }) {
  const out = { floor: [], fresh: [], full: [] };
  for (let i = 0; i < reps; i++) {
    console.error(`bench: streaming, round ${i + 1} of ${reps} …`);
    out.floor.push(await floorRun(launch, floorUrl, devUrl));
    out.fresh.push(await freshRun(launch, devUrl));
    out.full.push(await fullRun(launch, devUrl));
  }
  return out;
}

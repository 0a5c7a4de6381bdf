// Measures recall by meaning's background indexing through the app itself, in headless Chromium: an
// import of realistic chat turns (semantic/bench/turns.txt, cycled), recall by meaning turned on in
// Storage with the chosen model, and the index's progress as Storage shows it ("Semantic index: N of M
// turns") read once a second for a fixed time after indexing has started. Prints one JSON object: the
// turns indexed per second over that window, what the panel said at its ends, and how long a Ctrl+K
// search took to show its hits meanwhile (the query waits for the batch being embedded).
//   node tests/e2e/semantic-app-bench.js      (after `trunk build --release` and the dev server's build)
// COWORK_SEMANTIC_MODEL: all-MiniLM-L6-v2 (default) or all-mpnet-base-v2; BENCH_SECONDS: the window
// (default 40); BENCH_TURNS: turns imported (default 1,500).
import { writeFileSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, launchBrowser, openPage, ready, importFile } from './harness.js';
import { openStorage } from './semantic-support.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const model = process.env.COWORK_SEMANTIC_MODEL ?? 'all-MiniLM-L6-v2';
const seconds = Number(process.env.BENCH_SECONDS ?? 40);
const count = Number(process.env.BENCH_TURNS ?? 1500);
const turns = readFileSync(join(root, 'semantic/bench/turns.txt'), 'utf8').trim().split('\n');

const dir = mkdtempSync(join(tmpdir(), 'cowork-semantic-bench-'));
const file = join(dir, 'messages.json');
writeFileSync(file, JSON.stringify(Array.from({ length: count }, (_, i) => ({
  role: i % 2 ? 'assistant' : 'user',
  content: `${turns[i % turns.length]} (${i})`,
}))));

const server = await startServer({ lifetimeSecs: 900 });
const browser = await launchBrowser();
const watchdog = setTimeout(() => {
  console.error('semantic-app-bench: still running after 12 minutes; giving up');
  process.exit(2);
}, 12 * 60_000);
watchdog.unref();
try {
  const page = await openPage(browser.context, server.url);
  await ready(page);
  await importFile(page, file, 1, { timeout: 120_000 });
  const section = await openStorage(page);
  await section.getByLabel('Embedding model').selectOption(`${model}@1`);
  await section.getByLabel('Search by meaning').check();
  const progress = async () => {
    const text = await page.locator('.semantic-status').innerText();
    const m = text.replace(/,/g, '').match(/(\d+) of (\d+) turns/);
    return { at: performance.now(), done: m ? Number(m[1]) : -1, total: m ? Number(m[2]) : -1, text };
  };
  // From the first turn indexed (the model downloaded and loaded), for `seconds`.
  await page.waitForFunction(() => /[1-9][\d,]* of [\d,]+ turns/.test(document.querySelector('.semantic-status')?.textContent ?? ''),
    null, { timeout: 300_000 });
  const start = await progress();
  const samples = [start];
  while (performance.now() - start.at < seconds * 1000) {
    await page.waitForTimeout(1000);
    samples.push(await progress());
  }
  const end = samples.at(-1);
  // Searches by words and meaning while indexing goes on: from the query typed to its first hit shown.
  await page.getByRole('button', { name: 'Close' }).click();
  const searches = [];
  for (const q of ['what is the retry policy for rate limits', 'why was the highlighter slow', 'when is the standup']) {
    await page.keyboard.press('Control+k');
    const box = page.getByRole('combobox', { name: 'Search all sessions' });
    const t = performance.now();
    await box.fill(q);
    await page.locator('.hit').first().waitFor({ timeout: 60_000 });
    searches.push(+(performance.now() - t).toFixed(0));
    await box.press('Escape');
  }
  const out = {
    model,
    turns_imported: count,
    window_s: +((end.at - start.at) / 1000).toFixed(1),
    turns_per_s: +((end.done - start.done) / ((end.at - start.at) / 1000)).toFixed(1),
    start: start.text,
    end: end.text,
    search_while_indexing_ms: searches,
    problems: page.problems,
  };
  console.log(JSON.stringify(out, null, 2));
} finally {
  await browser.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}

// A 10,000-turn session: it opens at its end, scrolling up loads older turns while the DOM keeps a
// bounded window, and a search hit deep inside it opens around that turn.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useServerAndBrowser, openPage, ready, replyDone, send, exportArchive, importFile } from '../harness.js';

const TURNS = 10_000;
const BOUND = 200; // web/src/chat.rs VISIBLE_TURNS

let dir;
const app = useServerAndBrowser();
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'cowork-long-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A JSON Lines archive with one session of `n` turns, shaped like a real export of this app. */
function longArchive(sample, n) {
  const header = sample.find((l) => l.type === 'header');
  const session = sample.find((l) => l.type === 'session');
  const turn = sample.find((l) => l.type === 'turn');
  const id = randomUUID();
  const lines = [header, { ...session, id, title: `Long session of ${n} turns`, turn_count: n, state: {} }];
  for (let i = 1; i <= n; i++) {
    const user = i % 2 === 1;
    const word = i === 5_001 ? ' the quokka_needle is here' : '';
    lines.push({
      ...turn,
      session_id: id,
      turn_number: i,
      role: user ? 'user' : 'assistant',
      content: `long-turn ${i}: ${user ? 'a question' : 'an answer'} about step ${i}${word}`,
      token_count: 12,
      created_at: session.created_at + i,
      metadata: {},
    });
  }
  lines.push({ type: 'end', sessions: 1, turns: n });
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

const turnNumbers = (page) => page.locator('.turn').evaluateAll((els) => els.map((e) => Number(e.dataset.turn)));

test('a 10,000-turn session opens at its end and scrolls to its start in a bounded window', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'long-seed a message to copy the export shape from');
  await page.locator('.turn[data-role="assistant"]', { hasText: 'long-seed' }).waitFor({ timeout: 20_000 });
  await replyDone(page);
  const file = join(dir, 'long.jsonl');
  writeFileSync(file, longArchive(await exportArchive(page), TURNS));
  await importFile(page, file, 1, { timeout: 120_000 });

  await page.locator('.session', { hasText: `Long session of ${TURNS} turns` }).click();
  await page.locator(`.turn[data-turn="${TURNS}"]`).waitFor();
  await page.waitForFunction(() => {
    const list = document.querySelector('.turns');
    return list.scrollHeight - list.scrollTop - list.clientHeight < 60;
  });
  let shown = await turnNumbers(page);
  assert.ok(shown.length <= BOUND, `opening shows a window (${shown.length} turns)`);
  assert.equal(shown.at(-1), TURNS, 'the end is in view');

  // Scroll to the top again and again: older turns come in, the window never grows past the bound.
  let most = 0;
  for (let step = 0; step < 400 && shown[0] !== 1; step++) {
    const first = shown[0];
    await page.locator('.turns').evaluate((el) => (el.scrollTop = 0));
    await page.waitForFunction((f) => Number(document.querySelector('.turn')?.dataset.turn) < f, first, { timeout: 10_000 });
    shown = await turnNumbers(page);
    most = Math.max(most, shown.length);
    assert.ok(shown.length <= BOUND, `at most ${BOUND} turns in the DOM (${shown.length} at turn ${shown[0]})`);
    assert.deepEqual(shown, shown.map((_, i) => shown[0] + i), 'a contiguous run of turns, in order');
  }
  assert.equal(shown[0], 1, 'the first turn was reached');
  assert.equal(most, BOUND);
  await page.locator('.turn[data-turn="1"]', { hasText: 'long-turn 1: a question' }).waitFor();

  // Back down: newer turns load behind.
  const last = shown.at(-1);
  await page.locator('.turns').evaluate((el) => (el.scrollTop = el.scrollHeight));
  await page.waitForFunction((l) => Number([...document.querySelectorAll('.turn')].at(-1)?.dataset.turn) > l, last);

  // A search hit in the middle opens around it, marked.
  await page.keyboard.press('Control+k');
  await page.getByRole('combobox', { name: 'Search all sessions' }).fill('quokka_needle');
  await page.locator('.hit', { hasText: 'quokka' }).first().click();
  const hit = page.locator('.turn.focused[data-turn="5001"]');
  await hit.waitFor();
  assert.ok(await hit.isVisible(), 'the hit is in view');
  shown = await turnNumbers(page);
  assert.ok(shown.length <= BOUND && shown[0] < 5001 && shown.at(-1) > 5001, `a window around turn 5001: ${shown[0]}–${shown.at(-1)}`);
  assert.deepEqual(page.problems, []);
  await page.close();
});

// A long Markdown reply streaming in (the demo model's `[[bench:markdown]]`: 12 KB in 1,500 deltas over
// 6 s): only the streaming turn changes, the user can scroll up without being pulled back, screen
// readers are not told every delta, and the finished reply is the same HTML as when it is read back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useServerAndBrowser, openPage, ready, replyDone, send, exportArchive, importFile } from '../harness.js';

const app = useServerAndBrowser();
let dir;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'cowork-stream-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

test('a streamed Markdown reply changes only its own turn and ends as it is read back', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'An earlier question with `code`');
  await replyDone(page);
  // Watch the earlier turns: nothing in them may change while the next reply streams.
  await page.evaluate(() => {
    window.__touched = 0;
    const turns = document.querySelectorAll('.turn');
    window.__observer = new MutationObserver((r) => (window.__touched += r.length));
    turns.forEach((t) => window.__observer.observe(t, { subtree: true, childList: true, characterData: true, attributes: true }));
  });
  await send(page, 'A long answer please [[bench:markdown]]');
  const streaming = page.locator('.turn[data-role="assistant"] .turn-text[aria-live="off"]');
  await streaming.filter({ hasText: 'Step 3' }).waitFor({ timeout: 20_000 });
  assert.ok(await streaming.locator('pre code').count() > 0, 'the streamed text is shown as Markdown');

  // Scrolled up mid-stream, the conversation stays where the user put it.
  await page.evaluate(() => { document.querySelector('.turns').scrollTop = 0; });
  await page.waitForTimeout(1000);
  const top = await page.evaluate(() => document.querySelector('.turns').scrollTop);
  assert.ok(top < 50, `not pulled back to the end while scrolled up (scrollTop ${top})`);
  assert.ok(await streaming.count() === 1, 'still streaming when checked');
  await page.evaluate(() => { const l = document.querySelector('.turns'); l.scrollTop = l.scrollHeight; });

  await replyDone(page);
  const reply = page.locator('.turn[data-role="assistant"] .turn-text').last();
  await reply.filter({ hasText: 'bench-end:' }).waitFor();
  assert.equal(await page.evaluate(() => window.__touched), 0, 'the earlier turns were not touched');
  assert.equal(await page.locator('.turn-text[aria-live]').count(), 0, 'the finished reply is part of the live region again');
  const below = await page.evaluate(() => { const l = document.querySelector('.turns'); return l.scrollHeight - l.scrollTop - l.clientHeight; });
  assert.ok(below < 48, `back at the end, the conversation follows it (${below} px below)`);
  // Code blocks are coloured once complete, by a highlighter loaded on first use: compare them coloured.
  const coloured = (turn) => turn.locator('[data-highlight="pending"]').first().waitFor({ state: 'detached', timeout: 10_000 });
  await coloured(reply);
  const streamed = await reply.innerHTML();

  await page.reload();
  await ready(page);
  await page.locator('.session', { hasText: 'An earlier question' }).click();
  const saved = page.locator('.turn[data-role="assistant"] .turn-text').last();
  await saved.filter({ hasText: 'bench-end:' }).waitFor();
  await coloured(saved);
  assert.equal(await saved.innerHTML(), streamed, 'the same HTML as the reply read back from the archive');
  assert.ok(streamed.includes('<table>') && streamed.includes('<li>') && streamed.includes('<code>'), 'tables, lists, code');
  assert.deepEqual(page.problems, []);
  await page.close();
});

/** A JSON Lines archive of one session of `n` turns of a few lines each, shaped like `sample` (an export). */
function sessionOf(sample, n, title) {
  const header = sample.find((l) => l.type === 'header');
  const session = sample.find((l) => l.type === 'session');
  const turn = sample.find((l) => l.type === 'turn');
  const id = randomUUID();
  const lines = [header, { ...session, id, title, turn_count: n, state: {} }];
  for (let i = 1; i <= n; i++) {
    const user = i % 2 === 1;
    const content = user ? `Question ${i}: what about step ${i}?` : `### Answer ${i}\n\n- first, step ${i}\n- then the next\n\nDone.`;
    lines.push({ ...turn, session_id: id, turn_number: i, role: user ? 'user' : 'assistant', content,
      token_count: 12, created_at: session.created_at + i, metadata: {} });
  }
  lines.push({ type: 'end', sessions: 1, turns: n });
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

test('at the end of a long conversation, turns far above are skipped while a reply streams, and drawn when scrolled to', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'tail-seed a message to copy the export shape from');
  await replyDone(page);
  const file = join(dir, 'tail.jsonl');
  writeFileSync(file, sessionOf(await exportArchive(page), 60, 'Tail session of 60 turns'));
  await importFile(page, file, 1);
  await page.locator('.session', { hasText: 'Tail session of 60 turns' }).click();
  await page.locator('.turn[data-turn="60"]').waitFor();
  // Turns are skipped a run at a time (`.chunk`, 16 turns by number): the first run holds turn 1.
  const geometry = () => page.evaluate(() => {
    const first = document.querySelector('.turn[data-turn="1"]').closest('.chunk');
    return { height: first.getBoundingClientRect().height, skipped: getComputedStyle(first).contentVisibility === 'hidden' };
  });
  const before = await geometry();
  assert.equal(before.skipped, false, 'every turn is drawn before a reply starts');

  await send(page, 'A long answer please [[bench:markdown]]');
  const streaming = page.locator('.turn[data-role="assistant"] .turn-text[aria-live="off"]');
  await streaming.filter({ hasText: 'Step 3' }).waitFor({ timeout: 20_000 });
  assert.equal(await page.locator('.turns[data-tail]').count(), 1, 'following the end: only the last turns are drawn');
  const during = await geometry();
  assert.ok(during.skipped, 'the first turn is skipped while the reply streams');
  assert.equal(during.height, before.height, 'a skipped run of turns keeps its size');
  const recent = await page.locator('.turn[data-turn="60"]').evaluate((t) => getComputedStyle(t.closest('.chunk')).contentVisibility);
  assert.equal(recent, 'visible', 'the last turns are drawn');

  // Scrolled up mid-stream: everything is drawn again, and the user is not pulled back.
  await page.evaluate(() => { document.querySelector('.turns').scrollTop = 0; });
  await page.locator('.turns[data-tail]').waitFor({ state: 'detached' });
  assert.equal((await geometry()).skipped, false, 'the first turn is drawn when scrolled to');
  await page.locator('.turn[data-turn="1"]', { hasText: 'Question 1' }).waitFor();
  await page.waitForTimeout(1000);
  const top = await page.evaluate(() => document.querySelector('.turns').scrollTop);
  assert.ok(top < 50, `not pulled back to the end while scrolled up (scrollTop ${top})`);
  assert.ok(await streaming.count() === 1, 'still streaming when checked');

  await replyDone(page);
  await page.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'bench-end:' }).waitFor();
  assert.deepEqual(page.problems, []);
  await page.close();
});

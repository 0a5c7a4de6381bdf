// A long Markdown reply streaming in (the demo model's `[[bench:markdown]]`: 12 KB in 1,500 deltas over
// 6 s): only the streaming turn changes, the user can scroll up without being pulled back, screen
// readers are not told every delta, and the finished reply is the same HTML as when it is read back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useServerAndBrowser, openPage, ready, replyDone, send } from '../harness.js';

const app = useServerAndBrowser();

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
  const streamed = await reply.innerHTML();

  await page.reload();
  await ready(page);
  await page.locator('.session', { hasText: 'An earlier question' }).click();
  const saved = page.locator('.turn[data-role="assistant"] .turn-text').last();
  await saved.filter({ hasText: 'bench-end:' }).waitFor();
  assert.equal(await saved.innerHTML(), streamed, 'the same HTML as the reply read back from the archive');
  assert.ok(streamed.includes('<table>') && streamed.includes('<li>') && streamed.includes('<code>'), 'tables, lists, code');
  assert.deepEqual(page.problems, []);
  await page.close();
});

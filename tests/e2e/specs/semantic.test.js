// Recall by meaning (spec §17), end to end: the real model (all-MiniLM-L6-v2, served by the dev server
// from the copy setup installs) downloaded once into OPFS, the archive indexed in the background,
// Ctrl+K and the demo model's recall finding a paraphrase that the words alone do not, a reload in the
// middle of indexing going on where it stopped, an import indexed while a reply streams, and queries
// embedded offline once the model is in this browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useServerAndBrowser, openPage, ready, replyDone, send, importFile } from '../harness.js';
import { PARAPHRASE, openStorage, closeStorage, searchAll, pageWithFact } from '../semantic-support.js';

const app = useServerAndBrowser();

/** The numbers of "Semantic index: N of M turns" as the Storage panel shows them now. */
async function indexed(page) {
  const text = await page.locator('.semantic-status').innerText();
  const m = text.replace(/,/g, '').match(/(\d+) of (\d+) turns/);
  return m ? { done: Number(m[1]), total: Number(m[2]), text } : { done: -1, total: -1, text };
}

async function waitComplete(page, timeout = 240_000) {
  await page.locator('.semantic-status', { hasText: 'complete' }).waitFor({ timeout });
}

test('recall by meaning: on, indexed, found by Ctrl+K and by the model, offline too', async () => {
  const page = await pageWithFact(app);

  // The words alone find nothing.
  const lexical = await searchAll(page, PARAPHRASE);
  assert.ok(lexical.every((h) => !h.includes('auth tokens')), `lexical hits: ${lexical}`);

  // The model is described before the first download; then on, downloaded, and the archive indexed.
  const section = await openStorage(page);
  assert.match(await section.getByLabel('Embedding model').locator('option:checked').innerText(), /all-MiniLM-L6-v2 \(91 MB, Apache-2\.0/);
  await section.getByLabel('Search by meaning').check();
  await waitComplete(page);
  const done = await indexed(page);
  assert.equal(done.done, done.total, done.text);
  assert.ok(done.total >= 4, done.text);
  await closeStorage(page);

  // Ctrl+K finds the paraphrase, marked as found by meaning.
  const hits = await searchAll(page, PARAPHRASE);
  const hit = hits.find((h) => h.includes('auth tokens'));
  assert.ok(hit, `hits: ${hits}`);
  assert.match(hit, /by meaning/);

  // The demo model's recall (a back-reference sends it to conversation_recall) finds it too: the
  // archived tool result holds the fact.
  await send(page, `Do you remember ${PARAPHRASE}?`);
  await replyDone(page);
  const tool = page.locator('.turn', { hasText: 'conversation_recall' }).last();
  await tool.waitFor();
  const recalled = await page.evaluate(async () => {
    const texts = [...document.querySelectorAll('.turn')].map((t) => t.textContent);
    return texts.slice(-3).join('\n');
  });
  assert.match(recalled, /auth tokens expire/, recalled);

  // Offline, after a reload: the model comes from this browser's storage and still embeds queries.
  await app.browser.context.setOffline(true);
  try {
    await page.reload();
    await ready(page);
    await openStorage(page);
    await waitComplete(page, 60_000);
    await closeStorage(page);
    const offline = await searchAll(page, PARAPHRASE);
    assert.ok(offline.some((h) => h.includes('auth tokens') && /by meaning/.test(h)), `offline hits: ${offline}`);
  } finally {
    await app.browser.context.setOffline(false);
  }
  assert.deepEqual(page.problems.filter((p) => !/Failed to load resource|ERR_INTERNET_DISCONNECTED/.test(p)), []);
  await page.close();
});

test('an import is indexed in the background: a reply streams meanwhile, a reload resumes the index', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cowork-semantic-'));
  const file = join(dir, 'messages.json');
  const topics = ['the build cache', 'a flaky test', 'the release notes', 'database indexes', 'the CI runners'];
  const messages = [];
  for (let i = 0; i < 2000; i++) {
    const topic = topics[i % topics.length];
    messages.push({ role: i % 2 ? 'assistant' : 'user', content: `Message ${i} about ${topic}, item ${i * 7}.` });
  }
  writeFileSync(file, JSON.stringify(messages));

  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await importFile(page, file, 1, { timeout: 120_000 });

  await openStorage(page);
  // This tab's worker may still be loading the model (from OPFS) when the panel opens.
  await page.locator('.semantic-status', { hasText: /of [\d,]+ turns/ }).waitFor({ timeout: 60_000 });
  const before = await indexed(page);
  assert.ok(before.total >= 2000, before.text);
  // Some progress, not all of it: then reload in the middle.
  await page.waitForFunction(() => {
    const m = document.querySelector('.semantic-status')?.textContent.replace(/,/g, '').match(/(\d+) of (\d+) turns/);
    return m && Number(m[1]) > 0 && Number(m[1]) < Number(m[2]);
  }, null, { timeout: 120_000 });
  const mid = await indexed(page);
  await closeStorage(page);

  // A message sent while indexing streams and completes as usual.
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'Quick question while indexing runs');
  await replyDone(page);
  assert.match(await page.locator('.turn').last().innerText(), /Quick question while indexing runs/);

  await page.reload();
  await ready(page);
  await openStorage(page);
  await page.locator('.semantic-status', { hasText: 'of' }).waitFor({ timeout: 60_000 });
  const after = await indexed(page);
  assert.ok(after.done >= mid.done, `after the reload ${after.text}, before it ${mid.text}: it did not start again`);
  await waitComplete(page);
  await closeStorage(page);
  const hits = await searchAll(page, 'slow compilation caching');
  assert.ok(hits.some((h) => /build cache/.test(h)), `hits: ${hits}`);
  assert.deepEqual(page.problems, []);
  await page.close();
});

// Choosing the larger embedding model (spec §17): with recall by meaning on (all-MiniLM-L6-v2), the
// user picks all-mpnet-base-v2 in Storage; its files (served by the dev server from the copy setup
// installs) are downloaded into OPFS in place of the first model's, the archive is indexed again with
// it, Ctrl+K finds a paraphrase by meaning, and after a reload the model comes from this browser's copy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useServerAndBrowser, ready } from '../harness.js';
import { PARAPHRASE, openStorage, closeStorage, searchAll, pageWithFact } from '../semantic-support.js';

const app = useServerAndBrowser();

/** The models this origin keeps in OPFS, each with whether its copy is complete. */
async function keptModels(page) {
  return page.evaluate(async () => {
    const out = {};
    const models = await (await navigator.storage.getDirectory()).getDirectoryHandle('models', { create: true });
    for await (const [name, dir] of models.entries()) {
      out[name] = await dir.getFileHandle('complete.json').then(() => true, () => false);
    }
    return out;
  });
}

test('the larger model: chosen in Storage, downloaded in place of the first, the archive indexed again', async () => {
  const page = await pageWithFact(app);

  let section = await openStorage(page);
  const model = section.getByLabel('Embedding model');
  assert.equal(await model.inputValue(), 'all-MiniLM-L6-v2@1', 'the default model');
  await section.getByLabel('Search by meaning').check();
  await page.locator('.semantic-status', { hasText: 'complete' }).waitFor({ timeout: 120_000 });
  assert.deepEqual(await keptModels(page), { 'all-MiniLM-L6-v2': true });

  // The other model, described before its download; choosing it starts the index again.
  await model.selectOption('all-mpnet-base-v2@1');
  assert.match(await model.locator('option:checked').innerText(), /all-mpnet-base-v2 \(438 MB, Apache-2\.0 licence\): finds more/);
  await page.locator('.semantic-status', { hasText: 'Downloading the model' }).waitFor({ timeout: 30_000 });
  await page.locator('.semantic-status', { hasText: 'complete' }).waitFor({ timeout: 240_000 });
  assert.match(await page.locator('.semantic-status').innerText(), /Semantic index: (\d+) of \1 turns, complete/);
  assert.equal(await model.inputValue(), 'all-mpnet-base-v2@1');
  assert.deepEqual(await keptModels(page), { 'all-mpnet-base-v2': true }, 'the first model\'s copy is removed');
  await closeStorage(page);

  const hits = await searchAll(page, PARAPHRASE);
  const hit = hits.find((h) => h.includes('auth tokens'));
  assert.ok(hit && /by meaning/.test(hit), `hits: ${hits}`);

  // After a reload the chosen model is read from this browser's copy, and still finds it.
  await page.reload();
  await ready(page);
  section = await openStorage(page);
  await page.locator('.semantic-status', { hasText: 'complete' }).waitFor({ timeout: 120_000 });
  assert.equal(await section.getByLabel('Embedding model').inputValue(), 'all-mpnet-base-v2@1');
  await closeStorage(page);
  const again = await searchAll(page, PARAPHRASE);
  assert.ok(again.some((h) => h.includes('auth tokens') && /by meaning/.test(h)), `after the reload: ${again}`);
  assert.deepEqual(page.problems, []);
  await page.close();
});

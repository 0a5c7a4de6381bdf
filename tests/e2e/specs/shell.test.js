// The served app renders its shell and opens the archive on OPFS, with no console errors.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, openPage } from '../harness.js';

let server, browser;
before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

test('the shell renders and storage becomes ready on OPFS', async () => {
  const page = await openPage(browser.context, server.url);
  await page.locator('h1.brand').waitFor();
  assert.equal(await page.title(), 'Cowork');
  const status = page.locator('.storage-status[data-state="ready"]');
  await status.waitFor({ timeout: 30_000 });
  assert.equal((await status.innerText()).trim(), 'storage ready');
  assert.match(await status.getAttribute('title'), /saved in this browser/);
  assert.equal(await page.locator('.banner').count(), 0, 'no warning banner when storage persists');
  assert.deepEqual(page.problems, []);
});

test('a second load finds the same archive and still shows no errors', async () => {
  const page = await openPage(browser.context, server.url);
  await page.locator('.storage-status[data-state="ready"]').waitFor({ timeout: 30_000 });
  assert.deepEqual(page.problems, []);
  await page.close();
});

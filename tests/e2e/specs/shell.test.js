// The served app renders its shell and opens the archive on OPFS, with no console errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useServerAndBrowser, openPage, ready, replyDone, send } from '../harness.js';

const app = useServerAndBrowser();

test('the shell renders and storage becomes ready on OPFS', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await page.locator('h1.brand').waitFor();
  assert.equal(await page.title(), 'Cowork');
  const status = page.locator('.storage-status[data-state="ready"]');
  await status.waitFor({ timeout: 30_000 });
  assert.equal((await status.innerText()).trim(), 'storage ready');
  assert.match(await status.getAttribute('title'), /saved in this browser/);
  assert.equal(await page.locator('.banner').count(), 0, 'no warning banner when storage persists');
  const usage = page.locator('.storage-usage', { hasText: ' used' });
  await usage.waitFor({ timeout: 10_000 });
  // Only the space: whether the browser may clear the archive is a banner, once (keyboard.test.js).
  assert.match(await usage.innerText(), /^[\d.]+ [KMGT]?B of [\d.]+ [KMGT]?B used$/);
  assert.deepEqual(page.problems, []);
});

test('the page has a strict Content-Security-Policy: a script injected into it does not run', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await page.locator('.storage-status[data-state="ready"]').waitFor({ timeout: 30_000 });
  const policy = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
  assert.match(policy, /script-src 'self' 'wasm-unsafe-eval' 'sha256-[A-Za-z0-9+/=]+';/);
  assert.match(policy, /object-src 'none'/);
  assert.doesNotMatch(policy, /unsafe-inline/);
  assert.deepEqual(page.problems, [], 'the app itself breaks no rule of its policy');
  const ran = await page.evaluate(async () => {
    window.injected = false;
    const s = document.createElement('script');
    s.textContent = 'window.injected = true';
    document.body.append(s);
    const img = document.createElement('img');
    img.setAttribute('src', 'x');
    img.setAttribute('onerror', 'window.injected = true');
    document.body.append(img);
    await new Promise((r) => setTimeout(r, 200));
    return window.injected;
  });
  assert.equal(ran, false);
  assert.ok(page.problems.some((p) => p.includes('Content Security Policy')), 'the browser reports what it blocked');
  await page.close();
});

test('a second load finds the same archive and still shows no errors', async () => {
  // What the first load saves must be there on the second, from OPFS: a fresh page in the same
  // profile gets a new storage worker, so an in-memory archive would come back empty.
  const first = await openPage(app.browser.context, app.server.url);
  await ready(first);
  await send(first, 'Keep the heron for the second load');
  await first.locator('.turn[data-role="assistant"]', { hasText: 'You said' }).waitFor({ timeout: 20_000 });
  await replyDone(first);
  await first.close();

  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.locator('.session', { hasText: 'Keep the heron for the second load' }).click();
  await page.locator('.turn[data-role="user"]', { hasText: 'Keep the heron for the second load' }).waitFor();
  await page.locator('.turn[data-role="assistant"]', { hasText: 'You said' }).waitFor();
  assert.deepEqual(page.problems, []);
  await page.close();
});

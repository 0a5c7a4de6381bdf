// Everyday keys and looks: the shortcut sheet lists what the keys do and each works; the theme switch
// is remembered across reloads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useServerAndBrowser, openPage, ready, replyDone, send } from '../harness.js';

const app = useServerAndBrowser();

const background = (page) => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);

test('the theme switch goes light, dark and back to the system, and survives a reload', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.emulateMedia({ colorScheme: 'light' });
  const toggle = page.locator('.theme-toggle');
  assert.equal(await toggle.getAttribute('aria-label'), 'Theme: system');
  const systemLight = await background(page);
  await toggle.click(); // light
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'light');
  await toggle.click(); // dark
  assert.equal(await toggle.getAttribute('aria-label'), 'Theme: dark');
  const dark = await background(page);
  assert.notEqual(dark, systemLight, 'dark looks dark on a light system');
  await page.reload();
  await ready(page);
  assert.equal(await page.locator('.theme-toggle').getAttribute('aria-label'), 'Theme: dark', 'remembered');
  assert.equal(await background(page), dark);
  // Light, chosen, wins over a dark system; "system" follows it again.
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.locator('.theme-toggle').click(); // system
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), undefined);
  assert.equal(await background(page), dark, 'the system is dark now');
  await page.locator('.theme-toggle').click(); // light
  assert.equal(await background(page), systemLight);
  await page.locator('.theme-toggle').click(); // dark
  await page.locator('.theme-toggle').click(); // system, for the next tests
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the shortcut sheet lists the keys, and each does what it says', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.locator('body').click();
  await page.keyboard.press('?');
  const sheet = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await sheet.waitFor();
  const listed = await sheet.locator('dt').allInnerTexts();
  assert.deepEqual(listed, ['Ctrl/⌘ + K', 'Ctrl/⌘ + Shift + O', '/', 'Esc', '?', 'Enter', '↑']);
  await page.keyboard.press('Escape');
  await sheet.waitFor({ state: 'detached' });

  // `/` puts the cursor in the message box; typing `/` or `?` there is just typing.
  await page.keyboard.press('/');
  const box = page.getByLabel('Message', { exact: true });
  assert.equal(await box.evaluate((e) => e === document.activeElement), true);
  await page.keyboard.type('what? /help');
  assert.equal(await box.inputValue(), 'what? /help');
  assert.equal(await sheet.count(), 0);
  await box.fill('');

  // Ctrl+K searches; Esc closes it.
  await page.keyboard.press('Control+k');
  await page.getByRole('dialog', { name: /search/i }).waitFor();
  await page.keyboard.press('Escape');
  await page.getByRole('dialog', { name: /search/i }).waitFor({ state: 'detached' });

  // Esc with nothing open stops the reply being written.
  await send(page, 'shortcut-esc tell me about tokens and sessions at length [[fault:slow]]');
  await page.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'Demo' }).waitFor({ timeout: 20_000 });
  await page.keyboard.press('Escape');
  await page.locator('.turn[data-role="assistant"] .badge.interrupted').waitFor({ timeout: 20_000 });
  await replyDone(page);

  // Ctrl+Shift+O starts a new, empty session with the cursor in the message box.
  await page.keyboard.press('Control+Shift+O');
  await page.locator('.turn').first().waitFor({ state: 'detached' });
  assert.equal(await box.evaluate((e) => e === document.activeElement), true);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('Copy on a message copies its text exactly as archived', async () => {
  await app.browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(app.server.url).origin });
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  const text = 'copy me: `code` and **bold**';
  await send(page, text);
  const reply = page.locator('.turn[data-role="assistant"]').last();
  await reply.locator('.turn-text', { hasText: 'You said' }).waitFor({ timeout: 20_000 });
  await replyDone(page);
  const user = page.locator('.turn[data-role="user"]').last();
  await user.getByRole('button', { name: 'Copy' }).click();
  await user.getByRole('button', { name: 'Copied' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), text);
  await reply.getByRole('button', { name: 'Copy' }).click();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.ok(copied.startsWith('Demo model here') && copied.includes('**bold**'), `the Markdown source: ${copied}`);
  assert.deepEqual(page.problems, []);
  await page.close();
});

// A URL per session (#/s/<id>, #/s/<id>/t/<turn> for a search hit, #/ for a new conversation): a
// reload comes back to the session and the turn the user was reading, back and forward move between
// sessions, a pasted link opens its session, and a link to a session this browser does not hold says
// so. And the badges of a reply tell the truth: "writing…" while it streams, "interrupted" once stopped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useServerAndBrowser, openPage, ready, replyDone, send } from '../harness.js';

const app = useServerAndBrowser();

const hash = (page) => page.evaluate(() => location.hash);
const sessionOf = (h) => h.match(/^#\/s\/([^/]+)/)?.[1];
/** A message tall enough (40 lines) that three of them do not fit on the screen. */
const tall = (name) => [`${name}: the first line`, ...Array.from({ length: 39 }, (_, i) => `${name} line ${i + 2}`)].join('\n');

/** Where turn `n` is, in pixels below the top of the conversation's view. */
const offsetOf = (page, n) =>
  page.evaluate((n) => {
    const list = document.querySelector('.turns');
    const turn = document.querySelector(`.turn[data-turn="${n}"]`);
    return turn ? turn.getBoundingClientRect().top - list.getBoundingClientRect().top : null;
  }, n);

test('reload, back and forward and a pasted link open the session and the place the URL names', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  assert.equal(await hash(page), '', 'the welcome screen has no route of its own to push');
  await page.getByRole('button', { name: '+ New session' }).click();
  for (const name of ['route-alpha', 'route-alpha two', 'route-alpha three']) {
    await send(page, tall(name));
    await replyDone(page);
  }
  const alpha = sessionOf(await hash(page));
  assert.ok(alpha, `the first message's session has a URL: ${await hash(page)}`);

  // Scrolled to turn 3 (of 6), a reload comes back to it, not to the welcome screen or the end.
  await page.evaluate(() => document.querySelector('.turn[data-turn="3"]').scrollIntoView());
  await page.waitForFunction(() => history.state === 3, null, { timeout: 5_000 });
  await page.reload();
  await ready(page);
  await page.locator('.turn[data-turn="3"]').waitFor({ timeout: 10_000 });
  assert.equal(sessionOf(await hash(page)), alpha);
  await page.waitForTimeout(300);
  const at = await offsetOf(page, 3);
  assert.ok(at !== null && Math.abs(at) < 60, `turn 3 is at the top of the view again (${at} px)`);

  // A second session: "+ New session" is #/, its first message makes #/s/<beta>.
  await page.getByRole('button', { name: '+ New session' }).click();
  await page.waitForFunction(() => location.hash === '#/');
  await send(page, 'route-beta: a second conversation');
  await replyDone(page);
  const beta = sessionOf(await hash(page));
  assert.ok(beta && beta !== alpha, `the second session has its own URL: ${await hash(page)}`);

  // Back: the welcome screen, then alpha where it was read; forward: the welcome screen, then beta.
  const first = page.locator('.turn[data-role="user"] .turn-text').first();
  await page.goBack();
  await page.locator('.turn').first().waitFor({ state: 'detached' });
  assert.equal(await hash(page), '#/');
  await page.goBack();
  await first.filter({ hasText: 'route-alpha: the first line' }).waitFor();
  assert.equal(sessionOf(await hash(page)), alpha);
  await page.goForward();
  await page.locator('.turn').first().waitFor({ state: 'detached' });
  await page.goForward();
  await first.filter({ hasText: 'route-beta' }).waitFor();
  assert.equal(sessionOf(await hash(page)), beta);

  // A link pasted into the address bar (a hash change) and one opened in a new tab.
  await page.evaluate((id) => { location.hash = `#/s/${id}`; }, alpha);
  await first.filter({ hasText: 'route-alpha: the first line' }).waitFor();
  const other = await openPage(app.browser.context, `${app.server.url}#/s/${beta}`);
  await ready(other);
  await other.locator('.turn[data-role="user"] .turn-text').first().filter({ hasText: 'route-beta' }).waitFor();
  assert.deepEqual(other.problems, []);
  await other.close();
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a link to a session this browser does not hold says so, and the app stays usable', async () => {
  const page = await openPage(app.browser.context, `${app.server.url}#/s/0190aaaa-not-here`);
  await ready(page);
  const banner = page.getByRole('alert').filter({ hasText: "This session is not in this browser's archive" });
  await banner.waitFor({ timeout: 10_000 });
  assert.match(await banner.innerText(), /Sync/);
  assert.match(await banner.innerText(), /import/);
  assert.equal(await hash(page), '#/s/0190aaaa-not-here', 'the link stays, to be opened again later');
  // Writing a message starts a session as usual: the banner goes, the URL follows.
  await send(page, 'route-missing: still works');
  await replyDone(page);
  await banner.waitFor({ state: 'detached' });
  assert.ok(sessionOf(await hash(page)) && sessionOf(await hash(page)) !== '0190aaaa-not-here');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a search hit opens at its turn with a URL of that turn, and a reload keeps it', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'route-hit: nothing to find here');
  await replyDone(page);
  await send(page, 'route-hit: the zanzibar plan');
  await replyDone(page);
  const id = sessionOf(await hash(page));
  await page.getByRole('button', { name: '+ New session' }).click();
  await page.keyboard.press('Control+k');
  const dialog = page.getByRole('dialog', { name: /search/i });
  await dialog.waitFor();
  await dialog.getByRole('combobox').fill('zanzibar');
  const hit = dialog.locator('.hit').filter({ hasText: 'turn 3 · user' });
  await hit.waitFor({ timeout: 10_000 });
  await hit.click();
  await page.waitForFunction((id) => location.hash === `#/s/${id}/t/3`, id, { timeout: 5_000 });
  await page.locator('.turn.focused[data-turn="3"]').waitFor();
  await page.reload();
  await ready(page);
  await page.locator('.turn.focused[data-turn="3"]').waitFor({ timeout: 10_000 });
  assert.equal(await hash(page), `#/s/${id}/t/3`);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a reply being written is badged "writing…", never "interrupted"; a stopped one is "interrupted"', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'route-badge: tell me about tokens, sessions and cookies at length [[reasoning]] [[fault:slow]]');
  const reply = page.locator('.turn[data-role="assistant"]').last();
  await reply.locator('.thinking').waitFor({ timeout: 20_000 });
  await reply.locator('.badge.writing').waitFor();
  // While it thinks and writes (200 ms a chunk), it is never called interrupted.
  for (let i = 0; i < 8; i++) {
    assert.equal(await reply.locator('.badge.interrupted').count(), 0, 'no "interrupted" beside a live reply');
    await page.waitForTimeout(150);
  }
  await reply.locator('.turn-text', { hasText: 'Demo' }).waitFor({ timeout: 20_000 });
  assert.equal(await reply.locator('.badge.interrupted').count(), 0, 'nor while its text streams');
  assert.equal(await reply.locator('.badge.writing').innerText(), 'writing…');
  await page.getByRole('button', { name: 'Stop' }).click();
  await reply.locator('.badge.interrupted').waitFor({ timeout: 20_000 });
  await replyDone(page);
  assert.equal(await page.locator('.badge.writing').count(), 0, 'nothing is being written any more');
  assert.deepEqual(page.problems, []);
  await page.close();
});

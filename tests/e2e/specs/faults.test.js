// Fault injection: the tab's renderer (and with it the storage worker) is killed at random moments
// while a reply is being written, 50 times. After each crash a new tab opens the archive: every
// acknowledged message is there, once, and SQLite's integrity check says "ok".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useServerAndBrowser, openPage, ready, send, exportArchive, checkArchive } from '../harness.js';

const CRASHES = Number(process.env.COWORK_CRASHES ?? 50);

const app = useServerAndBrowser();

/** Kills the page's renderer process, as a crash would (no pagehide, no unload). */
async function crash(page) {
  const cdp = await page.context().newCDPSession(page);
  const crashed = new Promise((ok) => page.once('crash', ok));
  cdp.send('Page.crash').catch(() => {}); // never answered: the session dies with the page
  await Promise.race([crashed, new Promise((ok) => setTimeout(ok, 5_000))]);
  await page.close().catch(() => {});
}

test(`killing the tab mid-write ${CRASHES} times loses no acknowledged message and leaves a sound archive`, async () => {
  let page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  const acked = [];
  const started = Date.now();
  // A seeded generator, so a failing run can be replayed with the same timings.
  let seed = Number(process.env.COWORK_FAULT_SEED ?? 20261123);
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let i = 0; i < CRASHES; i++) {
    if (i > 0) {
      page = await openPage(app.browser.context, app.server.url);
      await ready(page);
      await page.locator('.session', { hasText: 'crash 0 ' }).first().click();
    }
    const text = `crash ${i} [[fault:slow]] while the reply is written`;
    await send(page, text);
    await page.locator('.turn[data-role="user"]', { hasText: `crash ${i} ` }).waitFor({ timeout: 20_000 });
    acked.push(text);
    await page.waitForTimeout(Math.floor(random() * 600));
    await crash(page);
    if (process.env.COWORK_FAULT_LOG) console.log(`crash ${i} at ${Date.now() - started} ms`);
  }
  page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  const lines = await exportArchive(page);
  // Titled by the first message without its control words ([[fault:slow]]).
  const session = lines.find((l) => l.type === 'session' && l.title.startsWith('crash 0 ') && !l.title.includes('[['));
  assert.ok(session, 'the session survived');
  const users = lines.filter((l) => l.type === 'turn' && l.session_id === session.id && l.role === 'user');
  assert.deepEqual(users.map((t) => t.content), acked, 'every acknowledged message is there, once, in order');
  assert.equal(await checkArchive(page), 'ok');
  assert.deepEqual(page.problems, []);
  await page.close();
});

// The browser runtime: several tabs on one archive, reloads in the middle of writes, a full quota,
// offline use from the service worker, and a browser context where OPFS is refused.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import {
  useServerAndBrowser, startServer, launchBrowser, openPage, ready, replyDone, send, exportArchive, checkArchive,
} from '../harness.js';

const app = useServerAndBrowser();
// A failed test must not leave a tab behind that owns the archive for the next one.
afterEach(async () => {
  for (const page of app.browser.context.pages()) await page.close().catch(() => {});
});

const assistantTurns = (page) => page.locator('.turn[data-role="assistant"]');

/** Sends `text` and waits for its reply: the page then shows `replies` assistant turns. */
async function exchange(page, text, replies) {
  await send(page, text);
  await page.locator('.turn[data-role="user"] .turn-text', { hasText: text }).first().waitFor({ timeout: 20_000 });
  await page.waitForFunction((n) => document.querySelectorAll('.turn[data-role="assistant"]').length >= n, replies, {
    timeout: 20_000,
  });
  await replyDone(page);
}

/** The user turns of the session titled by `first`, in order, from an export. */
function userTurns(lines, first) {
  // Found by its first message (its title leaves out the message's control words, [[fault:slow]]).
  const opening = lines.find((l) => l.type === 'turn' && l.turn_number === 1 && l.content === first);
  const session = opening && lines.find((l) => l.type === 'session' && l.id === opening.session_id);
  assert.ok(session, `the export has the session "${first}"`);
  const turns = lines.filter((l) => l.type === 'turn' && l.session_id === session.id);
  return { turns, users: turns.filter((t) => t.role === 'user').map((t) => t.content) };
}

test('two tabs write alternately to one archive; the owner closes mid-reply and the other takes over', async () => {
  const a = await openPage(app.browser.context, app.server.url);
  await ready(a);
  const b = await openPage(app.browser.context, app.server.url);
  await ready(b);
  await a.getByRole('button', { name: '+ New session' }).click();
  const sent = [];
  const first = 'two-tab A0 shared session';
  await exchange(a, first, 1);
  sent.push(first);
  // The new session shows up in the other tab without a reload.
  await b.locator('.session', { hasText: first }).click();
  await b.locator('.turn[data-role="user"]', { hasText: first }).waitFor();
  let replies = 1;
  for (let i = 1; i <= 25; i++) {
    for (const [page, name] of [[b, 'B'], [a, 'A']]) {
      if (name === 'A' && i === 25) continue;
      const text = `two-tab ${name}${i}`;
      replies += 1;
      await exchange(page, text, replies);
      sent.push(text);
    }
  }
  // 50 messages and 50 replies, 50 turns written through each tab; each tab shows every one.
  for (const page of [a, b]) {
    await page.waitForFunction((n) => document.querySelectorAll('.turn').length === n, sent.length * 2, { timeout: 20_000 });
  }

  // B's reply is being written by A's worker (A owns the archive) when A closes.
  const cut = 'two-tab B-slow [[fault:slow]] tell me a long story';
  await send(b, cut);
  await b.locator('.turn[data-role="user"]', { hasText: cut }).waitFor({ timeout: 20_000 });
  sent.push(cut);
  await b.waitForTimeout(400);
  await a.close();
  // B takes over, finds the message saved, and finishes the reply itself, without a Retry.
  await b.locator('.turn[data-role="assistant"]', { hasText: 'tell me a long story' }).last().waitFor({ timeout: 60_000 });
  await replyDone(b);
  assert.equal(await b.getByRole('button', { name: 'Retry' }).count(), 0, 'nothing to retry');

  // A third tab joins the new owner; they keep writing alternately.
  const c = await openPage(app.browser.context, app.server.url);
  await ready(c);
  await c.locator('.session', { hasText: first }).click();
  for (let i = 1; i <= 5; i++) {
    for (const page of [b, c]) {
      const text = `two-tab ${page === b ? 'B' : 'C'}-after ${i}`;
      await send(page, text);
      await page.locator('.turn[data-role="user"] .turn-text', { hasText: text }).first().waitFor({ timeout: 20_000 });
      await page.locator('.turn[data-role="assistant"]', { hasText: text }).first().waitFor({ timeout: 20_000 });
      await replyDone(page);
      sent.push(text);
    }
  }
  const { turns, users } = userTurns(await exportArchive(c), first);
  assert.deepEqual(users, sent, 'every message is in the archive once, in the order sent');
  // The third tab shows the session's end (a bounded window of it), exactly as archived.
  const shown = await c.locator('.turn').evaluateAll((els) => els.map((e) => Number(e.dataset.turn)));
  assert.equal(shown.length, Math.min(turns.length, 100));
  assert.deepEqual(shown, turns.slice(-shown.length).map((t) => t.turn_number), 'the newest turns, in order');
  assert.equal(await checkArchive(c), 'ok');
  for (const page of [b, c]) assert.deepEqual(page.problems, []);
  assert.deepEqual(a.problems, []);
  await b.close();
  await c.close();
});

test('three tabs: the owner closes while the third tab\'s reply streams; the reply finishes once, without Retry', async () => {
  const tabs = [];
  for (let i = 0; i < 3; i++) {
    const page = await openPage(app.browser.context, app.server.url);
    await ready(page);
    tabs.push(page);
  }
  const [owner, second, third] = tabs;
  await third.getByRole('button', { name: '+ New session' }).click();
  const asked = 'takeover story [[fault:slow]] tell me about tokens, sessions and cookies at length';
  await send(third, asked);
  // The owner's worker streams the third tab's reply; the owner closes after the first words.
  await third.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'Demo model here' }).waitFor({ timeout: 20_000 });
  await owner.close();
  const reply = third.locator('.turn[data-role="assistant"]').last();
  await reply.locator('.turn-text', { hasText: 'real endpoint for real answers' }).waitFor({ timeout: 60_000 });
  await replyDone(third);
  assert.equal(await third.getByRole('button', { name: 'Retry' }).count(), 0, 'no Retry was needed');
  assert.equal(await third.locator('.turn[data-role="assistant"]').count(), 1, 'one reply on screen');
  const shown = await reply.locator('.turn-text').innerText();
  assert.equal(shown.split('Demo model here').length - 1, 1, `no text twice on screen: ${shown}`);

  // The archive holds one complete reply, its text once, and the second tab sees the same.
  const lines = await exportArchive(second);
  const session = lines.find((l) => l.type === 'session' && l.title.startsWith('takeover story'));
  assert.ok(session, 'the session is archived');
  const replies = lines.filter((l) => l.type === 'turn' && l.session_id === session.id && l.role === 'assistant');
  assert.equal(replies.length, 1, 'one assistant turn');
  assert.equal(replies[0].status, 'complete');
  assert.equal(replies[0].content.split('Demo model here').length - 1, 1, `no duplicate text: ${replies[0].content}`);
  assert.ok(replies[0].content.includes('real endpoint for real answers'), 'the whole reply');
  const words = (t) => t.replace(/\s+/g, ' ').trim();
  assert.equal(words(replies[0].content), words(shown), 'the tab shows what is archived (HTML folds spaces)');
  for (const page of [second, third]) assert.deepEqual(page.problems, []);
});

test('reloading in the middle of writes, 20 times, loses no acknowledged message', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  const acked = [];
  for (let i = 0; i < 20; i++) {
    const text = `reload-burst ${i} [[fault:slow]] write while I reload`;
    await send(page, text);
    // Acknowledged: the worker saved it and the conversation shows it.
    await page.locator('.turn[data-role="user"]', { hasText: `reload-burst ${i} ` }).waitFor({ timeout: 20_000 });
    acked.push(text);
    await page.waitForTimeout(Math.floor(Math.random() * 400));
    await page.reload();
    await ready(page);
    await page.locator('.session', { hasText: 'reload-burst 0' }).first().click();
    await page.locator('.turn[data-role="user"]', { hasText: `reload-burst ${i} ` }).waitFor({ timeout: 20_000 });
  }
  const { users } = userTurns(await exportArchive(page), acked[0]);
  assert.deepEqual(users, acked, 'every acknowledged message is there, once');
  assert.equal(await checkArchive(page), 'ok');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a full storage quota gives a clear error, keeps the draft and every earlier turn', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await exchange(page, 'quota-check saved before the disk fills', 1);
  const usage = await page.evaluate(async () => (await navigator.storage.estimate()).usage);
  const cdp = await app.browser.context.newCDPSession(page);
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(app.server.url).origin, quotaSize: usage + 64 * 1024 });
  const big = `quota-check big ${'x'.repeat(2 * 1024 * 1024)}`;
  await page.getByLabel('Message', { exact: true }).fill(big);
  await page.getByLabel('Message', { exact: true }).press('Enter');
  await page.locator('.notice', { hasText: 'storage for this site is full' }).waitFor({ timeout: 30_000 });
  assert.equal((await page.getByLabel('Message', { exact: true }).inputValue()).length, big.length, 'the draft is kept');
  // Space again: the earlier turns are all there and the archive is sound.
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(app.server.url).origin });
  await page.reload();
  await ready(page);
  await page.locator('.session', { hasText: 'quota-check saved' }).first().click();
  await page.locator('.turn[data-role="user"]', { hasText: 'quota-check saved before the disk fills' }).waitFor();
  assert.equal(await page.locator('.turn').count(), 2);
  assert.equal(await checkArchive(page), 'ok');
  assert.ok(page.problems.every((p) => p.includes('full')), `only the quota error was reported: ${page.problems}`);
  await page.close();
});

test('offline: the app opens from the service worker, lists, reads and searches; a message sent is saved for later', async () => {
  const own = await startServer();
  const page = await openPage(app.browser.context, own.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await exchange(page, 'offline-proof the capybara_ledger lives in src/ledger.rs', 1);
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
  await own.stop();
  await app.browser.context.setOffline(true);
  try {
    await page.goto(own.url);
    await ready(page);
    await page.locator('.session', { hasText: 'offline-proof' }).first().click();
    await page.locator('.turn[data-role="assistant"]', { hasText: 'capybara_ledger' }).waitFor();
    await page.keyboard.press('Control+k');
    await page.getByRole('combobox', { name: 'Search all sessions' }).fill('capybara_ledger');
    await page.locator('.hit', { hasText: 'capybara' }).first().waitFor();
    await page.keyboard.press('Escape');
    // A message sent offline is saved (no model is asked); Retry will answer it once back online.
    await send(page, 'this waits for the network');
    await page.locator('.notice', { hasText: 'offline: your message is saved' }).waitFor();
    await page.locator('.turn[data-role="user"]', { hasText: 'this waits for the network' }).waitFor();
    assert.equal(await page.getByLabel('Message', { exact: true }).inputValue(), '', 'the draft became the saved turn');
    assert.equal(await page.locator('.turn').count(), 3, 'the message is saved, with no reply');
    await page.locator('.retry-bar').getByRole('button', { name: 'Retry' }).waitFor();
    await page.reload();
    await ready(page);
    await page.locator('.session', { hasText: 'offline-proof' }).first().click();
    await page.locator('.turn[data-role="user"]', { hasText: 'this waits for the network' }).waitFor();
  } finally {
    await app.browser.context.setOffline(false);
  }
  await page.close();
});

test('where OPFS is refused, a banner says so and the app works in memory', async () => {
  const insecure = await launchBrowser({ args: ['--host-resolver-rules=MAP cowork.test 127.0.0.1'] });
  try {
    const url = app.server.url.replace('127.0.0.1', 'cowork.test');
    const page = await openPage(insecure.context, url);
    await ready(page);
    await page.locator('.banner.warning', { hasText: 'Not saved' }).waitFor();
    await exchange(page, 'memory-mode still answers', 1);
    await page.getByRole('button', { name: 'Export', exact: true }).waitFor();
    assert.deepEqual(page.problems, []);
  } finally {
    await insecure.close();
  }
});

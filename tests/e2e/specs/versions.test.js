// One sidebar entry per conversation: edits and regenerations are versions of their conversation,
// listed once and switched at the message where they diverge; a fork made with "Fork from here" is an
// entry of its own, marked as a fork; search names the version a hit is in and shows a turn the
// versions share once; a reload keeps all of it.
//
// "6 versions" counts the conversation's branches: the original, three edits of its 2nd message and
// two regenerations of the last edit's reply are six sessions. The switches show them where they
// diverge: "4 / 4" at the edited message (the original and three edits) and "3 / 3" at the regenerated
// reply (the last edit's reply and its two regenerations) — 3 + 2 new versions besides the original.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useServerAndBrowser, openPage, ready, replyDone, send } from '../harness.js';

// Screenshots for a person to look at (the sidebar's entries, the switch), beside the screens spec's.
const OUT = join(dirname(fileURLToPath(import.meta.url)), '..', 'screenshots');

const app = useServerAndBrowser();

const switchAt = (page, n) => page.locator(`.turn[data-turn="${n}"] .branch-switch`);
const at = (page, n, text, timeout = 20_000) => switchAt(page, n).locator('.branch-at', { hasText: text }).waitFor({ timeout });
const replyTo = (page, text) =>
  page.locator('.turn[data-role="assistant"] .turn-text', { hasText: `You said: "${text}"` }).waitFor({ timeout: 20_000 });

async function edit(page, n, text) {
  await page.locator(`.turn[data-turn="${n}"]`).getByRole('button', { name: 'Edit' }).click();
  await page.getByLabel('Edited message').fill(text);
  await page.getByRole('button', { name: 'Send as a new version' }).click();
  await replyTo(page, text);
  await replyDone(page);
}

/** The sidebar's entries as their titles, in order. */
const entries = (page) => page.locator('.session-row .session-title').allInnerTexts();

test('three edits and two regenerations are one sidebar entry of 6 versions; a fork is its own entry; search names the version', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  const first = 'versions: the narwhal plan';
  await send(page, first);
  await replyTo(page, first);
  await replyDone(page);
  await send(page, 'versions: the schema');
  await replyTo(page, 'versions: the schema');
  await replyDone(page);

  // Three edits of the 2nd message, then two regenerations of the last edit's reply.
  await edit(page, 3, 'versions: the walrus schema');
  await edit(page, 3, 'versions: the otter schema');
  await edit(page, 3, 'versions: the heron schema');
  await at(page, 3, '4 / 4');
  for (const k of ['2 / 2', '3 / 3']) {
    await page.locator('.turn[data-turn="4"]').getByRole('button', { name: 'Regenerate' }).click();
    await at(page, 4, k);
    await replyDone(page);
  }
  assert.match(await page.locator('.turn[data-turn="3"] .turn-text').innerText(), /heron/);

  // One entry for all six versions, saying so; it is the open one.
  assert.deepEqual(await entries(page), [first]);
  const entry = page.locator('.session-row', { hasText: first });
  await entry.locator('.session-meta', { hasText: '6 versions' }).waitFor();
  assert.equal(await entry.locator('.session.active').count(), 1);

  // The switch is real buttons with names; ‹ at the edited message goes to the previous edit.
  const versions = switchAt(page, 3);
  assert.equal(await versions.getAttribute('aria-label'), 'Version 4 of 4 of this message');
  await versions.getByRole('button', { name: 'Previous version' }).click();
  await at(page, 3, '3 / 4');
  await page.locator('.turn[data-turn="3"] .turn-text', { hasText: 'otter' }).waitFor();
  assert.equal(await page.locator('.turn[data-turn="4"] .branch-switch').count(), 0, 'the otter edit has one reply');
  await switchAt(page, 3).getByRole('button', { name: 'Next version' }).click();
  await at(page, 3, '4 / 4');
  // The switch reads as text, not faint glyphs: full-contrast colour and a clickable size.
  const style = await switchAt(page, 3).getByRole('button', { name: 'Previous version' }).evaluate((b) => {
    const s = getComputedStyle(b);
    const r = b.getBoundingClientRect();
    return { opacity: Number(s.opacity), width: r.width, height: r.height, color: s.color, text: getComputedStyle(document.body).color };
  });
  assert.ok(style.opacity === 1 && style.width >= 28 && style.height >= 28, `a readable switch: ${JSON.stringify(style)}`);
  assert.equal(style.color, style.text, 'the switch has the text colour, not a muted grey');

  // "Fork from here" makes an entry of its own, marked as a fork of the conversation.
  await page.locator('.turn[data-turn="2"]').getByRole('button', { name: 'Fork from here' }).click();
  await page.waitForFunction(() => document.querySelectorAll('.session-row').length === 2);
  const fork = page.locator('.session-row.fork');
  await fork.locator('.session-fork-of', { hasText: `Fork of ${first}` }).waitFor();
  assert.equal(await fork.locator('.session.active').count(), 1, 'the fork is open');

  // Search: a hit in a later version names it; a turn every version shares is one hit.
  await page.keyboard.press('Control+k');
  const box = page.getByRole('combobox', { name: 'Search all sessions' });
  await box.fill('walrus');
  await page.locator('.hit', { hasText: 'walrus' }).first().waitFor({ timeout: 5_000 });
  const walrus = await page.locator('.hit .hit-meta').allInnerTexts();
  assert.ok(walrus.length >= 1 && walrus.every((m) => m.includes(`${first} (version 2 of 6)`)), `the hit names its version: ${walrus}`);
  await box.fill('narwhal');
  await page.locator('.hit', { hasText: 'narwhal' }).first().waitFor({ timeout: 5_000 });
  const narwhal = await page.locator('.hit').filter({ has: page.locator('.hit-snippet', { hasText: 'the narwhal plan' }) }).filter({ hasText: 'user' }).count();
  assert.equal(narwhal, 1, 'the first message, shared by all six versions and the fork, is one hit');
  assert.doesNotMatch(await page.locator('.hit .hit-meta').first().innerText(), /\(version \d+ of \d+\)/, 'a hit in the original names no version');
  await page.keyboard.press('Escape');

  // A reload keeps it: two entries, the conversation opening at its latest version.
  await page.reload();
  await ready(page);
  await page.waitForFunction(() => document.querySelectorAll('.session-row').length === 2, null, { timeout: 20_000 });
  await page.locator('.session-row.fork .session-fork-of', { hasText: `Fork of ${first}` }).waitFor();
  await page.locator('.session-row:not(.fork) .session-meta', { hasText: '6 versions' }).waitFor();
  await page.locator('.session-row:not(.fork) .session').click();
  await at(page, 3, '4 / 4');
  await at(page, 4, '3 / 3');
  mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: join(OUT, 'versions-desktop.png') });

  // Deleting the entry deletes the conversation, all six versions (the dialog says so); the fork made
  // from it stays, with the turns it had from it, and a reload shows the same.
  await page.locator('.session-row:not(.fork)').getByRole('button', { name: /^Actions for/ }).click();
  await page.getByRole('menuitem', { name: /^Delete/ }).click();
  await page.locator('.dialog', { hasText: 'Its 6 versions (edits and regenerations) are removed' }).waitFor();
  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  for (const reload of [false, true]) {
    if (reload) {
      await page.reload();
      await ready(page);
    }
    await page.waitForFunction(() => document.querySelectorAll('.session-row').length === 1, null, { timeout: 20_000 });
    assert.equal(await page.locator('.session-meta', { hasText: 'versions' }).count(), 0, 'no version is left');
    await page.locator('.session-row .session').click();
    await page.locator('.turn[data-turn="1"]', { hasText: 'the narwhal plan' }).waitFor();
    await page.locator('.turn[data-turn="2"]', { hasText: 'You said' }).waitFor();
  }
  assert.deepEqual(page.problems, []);
  await page.close();
});

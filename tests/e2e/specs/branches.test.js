// Edit and regenerate as branches: an edit or a regeneration forks the session just before the turn
// (nothing in the archive is rewritten), the turn shows "‹ 2 / 2 ›" and switches between the versions,
// and the versions survive a reload and an export → import.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useServerAndBrowser, launchBrowser, openPage, ready, replyDone, send, exportArchive } from '../harness.js';

const app = useServerAndBrowser();

/** Sends `text` and waits until the demo model's answer to it is complete. */
async function exchange(page, text) {
  await send(page, text);
  await page.locator('.turn[data-role="assistant"] .turn-text', { hasText: `You said: "${text}"` }).waitFor({ timeout: 20_000 });
  await replyDone(page);
}

const turnText = (page, n) => page.locator(`.turn[data-turn="${n}"] .turn-text`).innerText();
const switchAt = (page, n) => page.locator(`.turn[data-turn="${n}"] .branch-switch`);

/** The turns of the session titled `title` in an export, as (number, role, content). */
function turnsOf(lines, title) {
  const session = lines.find((l) => l.type === 'session' && l.title === title);
  assert.ok(session, `the export has "${title}"`);
  return lines.filter((l) => l.type === 'turn' && l.session_id === session.id);
}

test('edit a message and regenerate a reply as branches; switch with ‹ ›; nothing rewritten; they survive reload and export → import', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  const messages = ['branches one: the plan', 'branches two: the schema', 'branches three: the API', 'branches four: the tests'];
  for (const m of messages) await exchange(page, m);
  const before = turnsOf(await exportArchive(page), messages[0]);
  assert.equal(before.length, 8);

  // Edit the 2nd of 4 messages: a new version with its own reply, opened in place.
  await page.locator('.turn[data-turn="3"]').getByRole('button', { name: 'Edit' }).click();
  const box = page.getByLabel('Edited message');
  assert.equal(await box.inputValue(), messages[1], 'the editor starts from the message');
  await box.fill('branches two, edited: the other schema');
  await page.getByRole('button', { name: 'Send as a new version' }).click();
  await page.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'the other schema' }).waitFor({ timeout: 20_000 });
  await replyDone(page);
  assert.equal(await page.locator('.turn').count(), 4, 'the branch: two inherited turns, the edit, its reply');
  assert.equal(await turnText(page, 3), 'branches two, edited: the other schema');
  await switchAt(page, 3).locator('.branch-at', { hasText: '2 / 2' }).waitFor();

  // ‹ goes back to the original, › forward to the edit; each shows its own version of turn 3.
  await switchAt(page, 3).getByRole('button', { name: 'Previous version' }).click();
  await switchAt(page, 3).locator('.branch-at', { hasText: '1 / 2' }).waitFor();
  assert.equal(await turnText(page, 3), messages[1]);
  assert.equal(await page.locator('.turn').count(), 8, 'the original, all of it');
  await switchAt(page, 3).getByRole('button', { name: 'Next version' }).click();
  await switchAt(page, 3).locator('.branch-at', { hasText: '2 / 2' }).waitFor();
  assert.equal(await turnText(page, 3), 'branches two, edited: the other schema');
  await switchAt(page, 3).getByRole('button', { name: 'Previous version' }).click();
  await switchAt(page, 3).locator('.branch-at', { hasText: '1 / 2' }).waitFor();

  // Regenerate the original's last reply: 2 / 2 on turn 8.
  await page.locator('.turn[data-turn="8"]').getByRole('button', { name: 'Regenerate' }).click();
  await switchAt(page, 8).locator('.branch-at', { hasText: '2 / 2' }).waitFor({ timeout: 20_000 });
  await replyDone(page);
  assert.match(await turnText(page, 8), /You said: "branches four: the tests"/);

  // ↑ in the empty message box edits the last message.
  await page.getByLabel('Message', { exact: true }).press('ArrowUp');
  assert.equal(await page.getByLabel('Edited message').inputValue(), messages[3]);
  await page.getByLabel('Edited message').press('Escape');
  await page.getByLabel('Edited message').waitFor({ state: 'detached' });

  // The sidebar lists the conversation once, its versions under it (no rows of the same title).
  const rows = page.locator('.session-row');
  assert.equal(await rows.count(), 1);
  await rows.locator('.session-meta', { hasText: '3 versions' }).waitFor();
  assert.equal(await page.locator('.session-row.fork').count(), 0, 'versions are not forks');

  // A reload keeps everything; the entry opens the most recently active version (the regeneration);
  // the original's turns are byte for byte as they were.
  await page.reload();
  await ready(page);
  await page.locator('.session', { hasText: messages[0] }).click();
  await switchAt(page, 3).locator('.branch-at', { hasText: '1 / 2' }).waitFor({ timeout: 20_000 });
  await switchAt(page, 8).locator('.branch-at', { hasText: '2 / 2' }).waitFor();
  const lines = await exportArchive(page);
  assert.deepEqual(turnsOf(lines, messages[0]), before, 'the original turns are untouched');

  // Export → import into a fresh browser: the versions are there too.
  const dir = mkdtempSync(join(tmpdir(), 'cowork-branches-'));
  const file = join(dir, 'branches.jsonl');
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const other = await launchBrowser();
  try {
    const fresh = await openPage(other.context, app.server.url);
    await ready(fresh);
    await fresh.locator('.storage-usage').click();
    await fresh.getByLabel('Import files').setInputFiles(file);
    await fresh.locator('.import-result', { hasText: '→ 3 sessions' }).waitFor({ timeout: 20_000 });
    await fresh.getByRole('button', { name: 'Import', exact: true }).click();
    await fresh.locator('.import-result', { hasText: 'Imported 3 sessions' }).waitFor({ timeout: 20_000 });
    await fresh.getByRole('button', { name: 'Close' }).click();
    assert.equal(await fresh.locator('.session-row').count(), 1, 'imported, the versions are still one entry');
    await fresh.locator('.session', { hasText: messages[0] }).click();
    await switchAt(fresh, 3).locator('.branch-at', { hasText: '1 / 2' }).waitFor({ timeout: 20_000 });
    await switchAt(fresh, 3).getByRole('button', { name: 'Next version' }).click();
    await fresh.locator('.turn[data-turn="3"] .turn-text', { hasText: 'the other schema' }).waitFor();
    assert.deepEqual(fresh.problems, []);
  } finally {
    await other.close();
  }
  assert.deepEqual(page.problems, []);
  await page.close();
});

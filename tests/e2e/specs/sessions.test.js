// Managing sessions through the UI: fork at a turn, rename, filter, archive, delete (after a
// confirmation), and an export → import round trip (preview, then Import) that brings back exactly what was exported.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useServerAndBrowser, launchBrowser, openPage, ready, replyDone, send, exportArchive, newWorkspace } from '../harness.js';

const app = useServerAndBrowser();

async function exchange(page, text) {
  await send(page, text);
  await page.locator('.turn[data-role="assistant"]', { hasText: text }).first().waitFor({ timeout: 20_000 });
  await replyDone(page);
}

// By its title: a fork's row also names the conversation it came from ("Fork of …").
const row = (page, title) => page.locator('.session-row').filter({ has: page.locator('.session-title', { hasText: title }) });

async function menu(page, title, item) {
  await row(page, title).getByRole('button', { name: /^Actions for/ }).click();
  await row(page, title).getByRole('menuitem', { name: item }).click();
}

test('fork at a turn, rename, filter, archive and delete, each from the sidebar', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await exchange(page, 'sessions-ui original first question');
  await exchange(page, 'sessions-ui original second question');
  assert.equal(await page.locator('.turn').count(), 4);

  // Fork after the first reply: a new session with turns 1–2 opens.
  await page.locator('.turn[data-turn="2"]').hover();
  await page.locator('.turn[data-turn="2"]').getByRole('button', { name: 'Fork from here' }).click();
  await page.waitForFunction(() => document.querySelectorAll('.session-row').length === 2);
  await page.waitForFunction(() => document.querySelectorAll('.turn').length === 2);
  await page.locator('.turn[data-role="assistant"]', { hasText: 'first question' }).waitFor();
  assert.equal(await page.locator('.turn', { hasText: 'second question' }).count(), 0, 'the fork stops at turn 2');

  // Rename the fork in place; Esc on a second rename keeps the name.
  const fork = page.locator('.session-row:has(.session.active)');
  const forkTitle = (await fork.locator('.session-title').innerText()).trim();
  await menu(page, forkTitle, 'Rename');
  const box = page.getByLabel('Session name');
  await box.fill('Forked: the first question only');
  await box.press('Enter');
  await row(page, 'Forked: the first question only').waitFor();
  await menu(page, 'Forked: the first question only', 'Rename');
  await page.getByLabel('Session name').fill('not this');
  await page.getByLabel('Session name').press('Escape');
  await row(page, 'Forked: the first question only').waitFor();
  assert.equal(await row(page, 'not this').count(), 0);

  // The menu works from the keyboard: it opens on its first item, arrows move, Esc closes it.
  await row(page, 'Forked: the first question only').getByRole('button', { name: /^Actions for/ }).click();
  const focused = () => page.evaluate(() => document.activeElement?.textContent);
  await page.waitForFunction(() => document.activeElement?.textContent === 'Rename', null, { timeout: 5_000 });
  await page.keyboard.press('ArrowDown');
  assert.equal(await focused(), 'Fork');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowUp');
  assert.equal(await focused(), 'Delete…');
  await page.keyboard.press('Escape');
  await page.getByRole('menu').waitFor({ state: 'detached' });

  // The filter narrows the list.
  await page.getByLabel('Filter sessions').fill('forked');
  await page.waitForFunction(() => document.querySelectorAll('.session-row').length === 1);
  await page.getByLabel('Filter sessions').fill('no session has this name');
  await page.getByText('No session matches the filter.').waitFor();
  await page.getByLabel('Filter sessions').fill('');

  // Archive hides it; "Show archived" brings it back, marked; Unarchive restores it.
  await menu(page, 'Forked: the first question only', 'Archive');
  await page.waitForFunction(() => document.querySelectorAll('.session-row').length === 1);
  await page.getByLabel('Show archived').check();
  await row(page, 'Forked: the first question only').locator('.badge', { hasText: 'archived' }).waitFor();
  await menu(page, 'Forked: the first question only', 'Unarchive');
  await page.getByLabel('Show archived').uncheck();
  await page.waitForFunction(() => document.querySelectorAll('.session-row').length === 2);

  // Delete asks first; Cancel keeps it; Delete removes it (and its turns) for good.
  await menu(page, 'sessions-ui original', 'Delete…');
  await page.getByRole('alertdialog').getByText('4 turns are removed').waitFor();
  await page.getByRole('button', { name: 'Cancel' }).click();
  assert.equal(await row(page, 'sessions-ui original').count(), 1);
  await menu(page, 'sessions-ui original', 'Delete…');
  await page.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click();
  await page.waitForFunction(() => document.querySelectorAll('.session-row').length === 1);
  // The fork shares the deleted session's turns: it still reads them.
  await row(page, 'Forked').locator('.session').click();
  await page.locator('.turn[data-role="user"]', { hasText: 'sessions-ui original first question' }).waitFor();
  await page.reload();
  await ready(page);
  await row(page, 'Forked').waitFor(); // the list arrives just after the archive is ready
  assert.equal(await page.locator('.session-row').count(), 1, 'the deletion is saved');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('export, then import into a fresh browser, brings back every session and turn', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await exchange(page, 'round-trip alpha <b>kept verbatim</b> é 🚀');
  await page.getByRole('button', { name: '+ New session' }).click();
  await exchange(page, 'round-trip beta');
  const exported = await exportArchive(page);
  await page.close();

  const dir = mkdtempSync(join(tmpdir(), 'cowork-import-'));
  const file = join(dir, 'archive.jsonl');
  writeFileSync(file, exported.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const fresh = await launchBrowser();
  try {
    const other = await openPage(fresh.context, app.server.url);
    await ready(other);
    await other.locator('.storage-usage').click();
    await other.getByLabel('Import files').setInputFiles(file);
    const sessions = exported.filter((l) => l.type === 'session').length;
    await other.locator('.import-result', { hasText: `→ ${sessions} sessions` }).waitFor({ timeout: 20_000 });
    await other.getByRole('button', { name: 'Import', exact: true }).click();
    await other.locator('.import-result', { hasText: `Imported ${sessions} sessions` }).waitFor({ timeout: 20_000 });
    await other.getByRole('button', { name: 'Close' }).click();
    await row(other, 'round-trip alpha').locator('.session').click();
    await other.locator('.turn[data-role="user"]', { hasText: 'round-trip alpha <b>kept verbatim</b> é 🚀' }).waitFor();
    const again = await exportArchive(other);
    const pick = (lines) => lines.filter((l) => l.type === 'turn').map((t) => [t.session_id, t.turn_number, t.role, t.content]);
    assert.deepEqual(pick(again), pick(exported), 'the same turns, byte for byte');

    // Importing the same file again adds nothing; a broken file imports nothing and names the line.
    await other.locator('.storage-usage').click();
    await other.getByLabel('Import files').setInputFiles(file);
    await other.locator('.import-result', { hasText: 'already imported' }).waitFor({ timeout: 20_000 });
    const broken = join(dir, 'broken.jsonl');
    writeFileSync(broken, `${JSON.stringify(exported[0])}\n{"type": "turn", oops\n`);
    await other.getByLabel('Import files').setInputFiles(broken);
    await other.locator('.import-result', { hasText: 'Nothing was imported' }).filter({ hasText: 'line 2' }).waitFor();
    assert.deepEqual(other.problems, []);
  } finally {
    await fresh.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a new session goes to the workspace chosen in the sidebar', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await newWorkspace(page, 'billing-service');
  assert.equal(await page.getByLabel('Workspace for new sessions').inputValue(), 'billing-service', 'new sessions go to it');
  await page.getByRole('button', { name: '+ New session' }).click();
  await exchange(page, 'workspace-check where does this go');
  const meta = row(page, 'workspace-check').locator('.session-meta');
  // "now" in the browser's own language (Intl.RelativeTimeFormat, numeric "auto").
  const now = await page.evaluate(() => new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' }).format(0, 'second'));
  assert.ok((await meta.innerText()).startsWith(`demo · 2 turns · ${now}`), await meta.innerText());
  // The sidebar groups sessions by workspace, the most recently active workspace first.
  const groups = page.locator('.workspace-group');
  await groups.first().locator('.workspace-name', { hasText: 'billing-service' }).waitFor();
  assert.ok((await groups.count()) >= 2, 'the earlier sessions are in another workspace');
  const billing = groups.filter({ has: page.locator('.workspace-name', { hasText: 'billing-service' }) });
  assert.equal(await billing.locator('.session-row').count(), 1);
  assert.equal(await billing.locator('.workspace-count').innerText(), '1');
  await billing.locator('summary').click(); // folds the workspace away
  await billing.locator('.session-row').waitFor({ state: 'hidden' });
  await billing.locator('summary').click();
  await page.getByLabel('Filter sessions').fill('billing');
  await page.waitForFunction(() => [...document.querySelectorAll('.workspace-name')].map((w) => w.textContent).join() === 'billing-service');
  assert.equal(await page.locator('.session-row').count(), 1);
  assert.deepEqual(page.problems, []);
  await page.close();
});

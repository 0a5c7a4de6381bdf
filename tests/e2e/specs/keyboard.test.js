// Keyboard only: Ctrl/Cmd+K searches (what is typed goes into the search, never to the model), the
// arrows and Enter open a hit at its turn; every dialog takes the focus, keeps Tab inside, closes with
// Esc and gives the focus back to what opened it; a skip link leads to the message box; Settings' Save
// is on screen without scrolling at laptop and phone sizes. Controls are reached with the keyboard
// (`focus()` then Enter stands for Tabbing to them), never clicked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useServerAndBrowser, openPage, ready, replyDone, send, setOrchestratorDir, projectDir } from '../harness.js';

const app = useServerAndBrowser();

/** The open modal dialog (there is at most one). */
const modal = (page) => page.locator('[role=dialog][aria-modal=true], [role=alertdialog][aria-modal=true]');
const focusIn = (loc) => loc.evaluate((d) => d.contains(document.activeElement));
const focused = (page) =>
  page.evaluate(() => {
    const e = document.activeElement;
    return e ? `${e.tagName.toLowerCase()}.${e.className} "${(e.getAttribute('aria-label') ?? e.textContent).slice(0, 40)}"` : 'none';
  });

/** Presses Enter on a control reached by the keyboard. */
async function activate(loc) {
  await loc.focus();
  await loc.press('Enter');
}

/**
 * The dialog that `open` shows: the focus is inside it, 30 Tabs and 10 Shift+Tabs never leave it, Esc
 * closes it and the focus is back on `opener`.
 */
async function trapsAndReturns(page, name, open, opener) {
  await open();
  const dialog = modal(page);
  await dialog.waitFor();
  await page.waitForFunction(() => document.querySelector('[aria-modal=true]')?.contains(document.activeElement));
  assert.ok(await focusIn(dialog), `${name}: the focus moved into the dialog (it is on ${await focused(page)})`);
  for (let i = 1; i <= 30; i++) {
    await page.keyboard.press('Tab');
    assert.ok(await focusIn(dialog), `${name}: Tab ${i} stayed in the dialog (it is on ${await focused(page)})`);
  }
  for (let i = 1; i <= 10; i++) {
    await page.keyboard.press('Shift+Tab');
    assert.ok(await focusIn(dialog), `${name}: Shift+Tab ${i} stayed in the dialog (it is on ${await focused(page)})`);
  }
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  await page.waitForFunction((el) => el === document.activeElement, await opener.elementHandle());
}

test('Ctrl+K searches what is typed, the arrows and Enter open the hit at its turn, and nothing goes to the model', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await send(page, 'kbd-search the quokka migration plan');
  await page.locator('.turn[data-role="assistant"]').waitFor({ timeout: 20_000 });
  await replyDone(page);
  await page.keyboard.press('Control+Shift+O');
  await send(page, 'kbd-search something else entirely');
  await page.locator('.turn[data-role="assistant"]').waitFor({ timeout: 20_000 });
  await replyDone(page);
  const box = page.getByLabel('Message', { exact: true });
  const turnsBefore = await page.locator('.turn').count();

  // From the message box, as the issue found it: Ctrl+K must take the focus.
  await box.focus();
  await page.keyboard.press('Control+k');
  const search = page.getByRole('dialog', { name: 'Search all sessions' });
  await search.waitFor();
  const input = search.getByRole('combobox');
  await page.waitForFunction(() => document.activeElement?.classList.contains('search-input'));
  await page.keyboard.type('quokka');
  assert.equal(await input.inputValue(), 'quokka', 'the words went into the search');
  assert.equal(await box.inputValue(), '', 'and not into the message box');
  const hit = search.locator('[role=option]', { hasText: 'quokka' });
  await hit.first().waitFor({ timeout: 10_000 });
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowUp');
  const active = await input.getAttribute('aria-activedescendant');
  assert.equal(await search.locator(`#${active}`).getAttribute('aria-selected'), 'true', 'the selected hit is named');
  assert.match(await search.locator(`#${active}`).innerText(), /quokka/);
  await page.keyboard.press('Enter');
  await search.waitFor({ state: 'detached' });
  await page.locator('.turn[data-role="user"]', { hasText: 'the quokka migration plan' }).waitFor();
  assert.equal(await page.locator('.session.active .session-title').innerText(), 'kbd-search the quokka migration plan');

  // Nothing was sent: the other session still has its two turns, and no turn holds the search words.
  await page.waitForTimeout(1000);
  assert.equal(await box.inputValue(), '');
  assert.equal(await page.locator('.turn', { hasText: /^\s*quokka\s*$/ }).count(), 0);
  await activate(page.locator('.session', { hasText: 'kbd-search something else' }));
  await page.locator('.turn[data-role="user"]', { hasText: 'something else entirely' }).waitFor();
  assert.equal(await page.locator('.turn').count(), turnsBefore, 'no message was sent to the model');
  assert.equal(await page.locator('.turn[data-role="user"]').count(), 1);

  // Esc closes the search and gives the focus back.
  await box.focus();
  await page.keyboard.press('Control+k');
  await search.waitFor();
  await page.keyboard.press('Escape');
  await search.waitFor({ state: 'detached' });
  assert.ok(await box.evaluate((e) => e === document.activeElement), 'the focus is back in the message box');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('every dialog takes the focus, keeps Tab inside, closes with Esc and gives the focus back', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await send(page, 'kbd-dialogs a session to act on');
  await page.locator('.turn[data-role="assistant"]').waitFor({ timeout: 20_000 });
  await replyDone(page);
  const header = (name) => page.locator('.app-header').getByRole('button', { name, exact: true });

  for (const [name, opener] of [
    ['Settings', header('Settings')],
    ['Search', page.locator('.app-header').getByRole('button', { name: 'Search' })],
    ['Shortcuts', header('Keyboard shortcuts')],
    ['Storage', page.locator('.storage-usage')],
    ['Model picker', page.locator('.model-button')],
    ['Workspace', page.locator('.workspace-settings-button').first()],
  ]) {
    await trapsAndReturns(page, name, () => activate(opener), opener);
  }
  // The delete confirmation, from a session's menu.
  const menuButton = page.locator('.session-menu-button').first();
  const sessions = await page.locator('.session-row').count();
  await trapsAndReturns(page, 'Delete', async () => {
    await activate(menuButton);
    // The menu puts the focus on its first item once it shows (`focus_later`): move it after that.
    await page.waitForFunction(() => document.activeElement?.closest('.session-menu'));
    await page.locator('.session-menu [role=menuitem]', { hasText: 'Delete' }).focus();
    const before = await focused(page);
    await page.keyboard.press('Enter');
    await modal(page).waitFor({ timeout: 5_000 }).catch(async () => {
      const state = await page.evaluate(() => ({ menus: document.querySelectorAll('.session-menu').length, rows: document.querySelectorAll('.session-row').length }));
      throw new Error(`Enter on Delete (focus was on ${before}) opened no dialog: now ${JSON.stringify(state)}, focus on ${await focused(page)}`);
    });
  }, menuButton);
  assert.equal(await page.locator('.session-row').count(), sessions, 'Esc on the confirmation deletes nothing');

  // The image lightbox.
  const pixel = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
  await page.locator('.composer input[type=file]').setInputFiles({ name: 'dot.png', mimeType: 'image/png', buffer: pixel });
  await page.locator('.composer .attachment-chip', { hasText: 'dot.png' }).waitFor();
  await send(page, 'kbd-dialogs the image');
  await page.locator('.turn[data-role="assistant"]', { hasText: 'I received 1 image' }).waitFor({ timeout: 20_000 });
  await replyDone(page);
  const view = page.getByRole('button', { name: 'View dot.png full size' });
  await trapsAndReturns(page, 'Lightbox', () => activate(view), view);

  // The session panel is an aside beside the conversation: the focus goes in, Esc closes it, the
  // focus comes back.
  const panelButton = header('Session');
  await activate(panelButton);
  const panel = page.locator('.session-panel');
  await panel.waitFor();
  await page.waitForFunction(() => document.querySelector('.session-panel')?.contains(document.activeElement));
  await page.keyboard.press('Escape');
  await panel.waitFor({ state: 'detached' });
  assert.ok(await panelButton.evaluate((e) => e === document.activeElement), 'the focus is back on Session');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the approval dialog traps the focus and answers Esc as Deny', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await setOrchestratorDir(page, projectDir());
  await page.keyboard.press('Control+Shift+O');
  await send(page, 'Please delegate: write the kbd-approval notes');
  const dialog = page.getByRole('dialog', { name: 'Delegate this task?' });
  await dialog.waitFor({ timeout: 20_000 });
  await page.waitForFunction(() => document.activeElement?.textContent === 'Approve');
  for (let i = 1; i <= 30; i++) {
    await page.keyboard.press('Tab');
    assert.ok(await focusIn(dialog), `Tab ${i} stayed in the approval dialog (it is on ${await focused(page)})`);
  }
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  await replyDone(page);
  assert.equal(await page.locator('.task-card').count(), 0, 'Esc denied the delegation');
  await page.close();
});

test('the first Tab reaches "Skip to message box", which puts the cursor there', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.keyboard.press('Tab');
  const skip = page.getByRole('link', { name: 'Skip to message box' });
  assert.ok(await skip.evaluate((e) => e === document.activeElement), `first stop: ${await focused(page)}`);
  const box = await skip.boundingBox();
  assert.ok(box && box.y >= 0 && box.height > 0, 'it is visible while focused');
  const outline = await skip.evaluate((e) => getComputedStyle(e).outlineStyle);
  assert.notEqual(outline, 'none', 'and shows the focus');
  await page.keyboard.press('Enter');
  assert.ok(await page.getByLabel('Message', { exact: true }).evaluate((e) => e === document.activeElement));
  await page.close();
});

test("Settings is in sections, and its Save is on screen without scrolling at 1280×800 and 390×844", async () => {
  for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
    const page = await openPage(app.browser.context, app.server.url);
    await page.setViewportSize(viewport);
    await ready(page);
    const opener = page.locator('.app-header').getByRole('button', { name: 'Settings', exact: true });
    await activate(opener);
    const dialog = page.getByRole('dialog', { name: 'Settings' });
    await dialog.waitFor();
    const tabs = dialog.getByRole('tab');
    assert.deepEqual(await tabs.allInnerTexts(), ['General', 'Providers', 'Workspaces', 'Tools', 'Data', 'Sync']);
    assert.equal(await dialog.getByRole('tab', { selected: true }).innerText(), 'Providers');
    // The token budgets are folded away under Advanced.
    assert.equal(await dialog.getByLabel('Context window (tokens)').isVisible(), false);
    await dialog.getByText(/^Advanced/).focus();
    await page.keyboard.press('Enter');
    await dialog.getByLabel('Context window (tokens)').waitFor();
    const size = `${viewport.width}×${viewport.height}`;
    // The arrows move through the sections; on each, Save is in the viewport and nothing covers it.
    await dialog.getByRole('tab', { name: 'Providers' }).focus();
    for (const name of ['Providers', 'Workspaces', 'Tools', 'Data', 'Sync', 'General']) {
      assert.equal(await dialog.getByRole('tab', { selected: true }).innerText(), name);
      const save = dialog.getByRole('button', { name: 'Save', exact: true });
      const box = await save.boundingBox();
      assert.ok(box && box.y >= 0 && box.y + box.height <= viewport.height && box.x >= 0 && box.x + box.width <= viewport.width,
        `${size}, ${name}: Save is in view (${JSON.stringify(box)})`);
      const onTop = await page.evaluate(({ x, y }) => document.elementFromPoint(x, y)?.textContent, { x: box.x + box.width / 2, y: box.y + box.height / 2 });
      assert.equal(onTop, 'Save', `${size}, ${name}: nothing covers Save`);
      await page.keyboard.press('ArrowDown');
    }
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.ok(await opener.evaluate((e) => e === document.activeElement));
    assert.deepEqual(page.problems, []);
    await page.close();
  }
});

test('a workspace is made with New workspace and its name, not by typing in the sidebar', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  const field = page.getByLabel('Workspace for new sessions');
  assert.equal(await field.evaluate((e) => e.tagName), 'SELECT', 'a choice, not a text field');
  await field.focus();
  await field.selectOption({ label: 'New workspace…' });
  const dialog = page.getByRole('dialog', { name: 'Settings' });
  await dialog.waitFor();
  assert.equal(await dialog.getByRole('tab', { selected: true }).innerText(), 'Workspaces');
  await dialog.getByLabel('Name', { exact: true }).fill('kbd-garden');
  await dialog.getByRole('button', { name: 'New workspace' }).focus();
  await page.keyboard.press('Enter');
  await dialog.locator('.workspace-saved', { hasText: '“kbd-garden” saved' }).waitFor();
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  assert.equal(await field.inputValue(), 'kbd-garden', 'new sessions go to it');
  await send(page, 'kbd-garden first words');
  await page.locator('.workspace-name', { hasText: 'kbd-garden' }).waitFor();
  await replyDone(page);
  assert.deepEqual(page.problems, []);
  await page.close();
});

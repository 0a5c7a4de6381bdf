// Screenshots of every screen and dialog at desktop (1280×800) and phone (390×844) width, each in the
// light and the dark theme, saved under tests/e2e/screenshots/ (git-ignored) for a person to look at:
// `<width>-<screen>-<theme>.png`. The test asserts each screen's key parts are visible and nothing
// overflows the viewport sideways.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useServerAndBrowser, openPage, ready, replyDone, send, setOrchestratorDir, projectDir, png } from '../harness.js';

const OUT = join(dirname(fileURLToPath(import.meta.url)), '..', 'screenshots');

const app = useServerAndBrowser();
before(() => {
  mkdirSync(OUT, { recursive: true });
});


/** Checks nothing sticks out sideways, then shoots the screen in the light and in the dark theme. */
async function shot(page, name) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `${name}: nothing sticks out sideways (${overflow}px)`);
  await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== 'running')); // a drawer slid in
  for (const theme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: theme });
    await page.screenshot({ path: join(OUT, `${name}-${theme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

for (const [label, width, height] of [['desktop', 1280, 800], ['phone', 390, 844]]) {
  test(`every screen at ${label} width (${width}×${height}), light and dark`, async () => {
    const page = await openPage(app.browser.context, app.server.url);
    await ready(page);
    // The default workspace's project on the orchestrator's machine, so the screens can show a delegation.
    await setOrchestratorDir(page, projectDir());
    await page.setViewportSize({ width, height });
    const phone = width < 700;
    await shot(page, `${label}-welcome`);
    if (phone) {
      await page.getByRole('button', { name: 'Sessions' }).click();
      await shot(page, `${label}-drawer`);
    }
    await page.getByRole('button', { name: '+ New session' }).click();
    assert.ok(!(await page.locator('.sidebar').isVisible()) || !phone, 'on a phone, New session shows the conversation');
    await page.locator('.composer input[type=file]').setInputFiles([
      { name: 'auth.py', mimeType: 'text/x-python', buffer: Buffer.from('def login(user):\n    return user.token\n') },
      { name: 'diagram.png', mimeType: 'image/png', buffer: png(960, 600) },
    ]);
    await page.locator('.composer .attachment-chip', { hasText: 'diagram.png' }).waitFor();
    await page.getByLabel('Message', { exact: true }).fill('Plan: keep the tokens in src/auth.py. Never use an ORM.\n```python\ndef login(user):\n    return user.token\n```');
    await shot(page, `${label}-composer`);
    await page.getByLabel('Message', { exact: true }).press('Enter');
    await page.locator('.turn[data-role="assistant"]').first().waitFor({ timeout: 20_000 });
    await replyDone(page);
    await send(page, 'What did we decide earlier about the ORM? Show it as `code` in a block.');
    await page.locator('.tool-call', { hasText: 'Searched the archive' }).waitFor({ timeout: 20_000 });
    await replyDone(page);
    await shot(page, `${label}-conversation`);

    await page.getByRole('button', { name: 'View diagram.png full size' }).click();
    await page.locator('.lightbox-image').waitFor();
    await shot(page, `${label}-lightbox`);
    await page.keyboard.press('Escape');

    await page.locator('.turn[data-role="user"]').first().getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Edited message').waitFor();
    await shot(page, `${label}-edit`);
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();

    // The session panel: the decision from the first message, and the last request's context use.
    await page.getByRole('button', { name: 'Session', exact: true }).click();
    const panel = page.getByRole('complementary', { name: 'Session state' });
    await panel.getByText(/never use an ORM/i).first().waitFor();
    assert.match(await panel.locator('.meter-text').first().innerText(), /of [\d.]+k? tokens \(\d+%\)/);
    assert.match(await panel.innerText(), /turns in the window; \d+ only in the archive/);
    await shot(page, `${label}-session-panel`);
    await panel.getByRole('button', { name: 'Close the session panel' }).click();

    await page.locator('.model-button').click();
    await page.getByRole('dialog', { name: 'Model for this session' }).waitFor();
    await shot(page, `${label}-model-menu`);
    await page.getByRole('button', { name: 'Done' }).click();

    await send(page, 'delegate: add refresh tokens in src/auth.py');
    await page.getByRole('dialog', { name: 'Delegate this task?' }).waitFor({ timeout: 20_000 });
    await shot(page, `${label}-approval`);
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.locator('.task-card[data-status="completed"]').waitFor({ timeout: 30_000 });
    await replyDone(page);
    await shot(page, `${label}-delegated`);

    if (phone) await page.getByRole('button', { name: 'Sessions' }).click();
    await page.locator('.session-row').first().getByRole('button', { name: /^Actions for/ }).click();
    await page.getByRole('menuitem', { name: 'Rename' }).waitFor();
    await shot(page, `${label}-sidebar-menu`);
    await page.getByRole('menuitem', { name: /^Delete/ }).click();
    await page.getByRole('button', { name: 'Cancel', exact: true }).waitFor();
    await shot(page, `${label}-delete`);
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await page.locator('.workspace-settings-button').first().click();
    await page.locator('.overlay .dialog').waitFor();
    await shot(page, `${label}-workspace`);
    await page.keyboard.press('Escape');
    await page.locator('.overlay').waitFor({ state: 'detached' });
    if (phone) await page.getByRole('button', { name: 'Sessions' }).click();

    await page.keyboard.press('Control+k');
    await page.getByRole('combobox', { name: 'Search all sessions' }).fill('ORM');
    await page.locator('.hit').first().waitFor();
    await shot(page, `${label}-search`);
    await page.keyboard.press('Escape');

    await page.getByRole('button', { name: 'Keyboard shortcuts' }).click();
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await shot(page, `${label}-shortcuts`);
    await page.keyboard.press('Escape');

    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    await page.getByRole('dialog', { name: 'Settings', exact: true }).waitFor();
    await shot(page, `${label}-settings`);
    // Every section of Settings (Sync among them) is a screen of its own.
    const settings = page.getByRole('dialog', { name: 'Settings', exact: true });
    for (const section of ['Providers', 'Workspaces', 'Data', 'Sync']) {
      await settings.getByRole('tab', { name: section, exact: true }).click();
      await settings.getByRole('tab', { name: section, exact: true, selected: true }).waitFor();
      await shot(page, `${label}-settings-${section.toLowerCase()}`);
    }
    await page.keyboard.press('Escape');
    await page.locator('.overlay').waitFor({ state: 'detached' });

    await page.locator('.storage-usage').click();
    await page.getByRole('button', { name: 'Check archive' }).click();
    await page.locator('.integrity', { hasText: 'Archive check: ok' }).waitFor();
    await shot(page, `${label}-storage`);
    assert.deepEqual(page.problems, []);
    await page.close();
  });
}

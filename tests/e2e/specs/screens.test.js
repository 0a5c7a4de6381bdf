// Screenshots of the main screens at desktop (1280×800) and phone (390×844) width, saved under
// tests/e2e/screenshots/ for a person to look at; the test asserts each screen's key parts are visible
// and nothing overflows the viewport sideways.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useServerAndBrowser, openPage, ready, replyDone, send, setOrchestratorDir, projectDir } from '../harness.js';

const OUT = join(dirname(fileURLToPath(import.meta.url)), '..', 'screenshots');

const app = useServerAndBrowser();
before(() => {
  mkdirSync(OUT, { recursive: true });
});

async function shot(page, name) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `${name}: nothing sticks out sideways (${overflow}px)`);
  await page.screenshot({ path: join(OUT, `${name}.png`) });
}

for (const [label, width, height] of [['desktop', 1280, 800], ['phone', 390, 844]]) {
  test(`the main screens at ${label} width (${width}×${height})`, async () => {
    const page = await openPage(app.browser.context, app.server.url);
    await ready(page);
    // The default workspace's project on the orchestrator's machine, so the screens can show a delegation.
    await setOrchestratorDir(page, projectDir());
    await page.setViewportSize({ width, height });
    const phone = width < 700;
    if (phone) await page.getByRole('button', { name: 'Sessions' }).click();
    await page.getByRole('button', { name: '+ New session' }).click();
    assert.ok(!(await page.locator('.sidebar').isVisible()) || !phone, 'on a phone, New session shows the conversation');
    await send(page, 'Plan: keep the tokens in src/auth.py. Never use an ORM.');
    await page.locator('.turn[data-role="assistant"]').first().waitFor({ timeout: 20_000 });
    await replyDone(page);
    await send(page, 'What did we decide earlier about the ORM?');
    await page.locator('.tool-call', { hasText: 'Searched the archive' }).waitFor({ timeout: 20_000 });
    await replyDone(page);
    await shot(page, `${label}-conversation`);

    // The session panel: the decision from the first message, and the last request's context use.
    await page.getByRole('button', { name: 'Session', exact: true }).click();
    const panel = page.getByRole('complementary', { name: 'Session state' });
    await panel.getByText(/never use an ORM/i).first().waitFor();
    assert.match(await panel.locator('.meter-text').first().innerText(), /of [\d.]+k? tokens \(\d+%\)/);
    assert.match(await panel.innerText(), /turns in the window; \d+ only in the archive/);
    await shot(page, `${label}-session-panel`);
    await panel.getByRole('button', { name: 'Close the session panel' }).click();

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
    await page.keyboard.press('Escape');
    await page.getByRole('menuitem', { name: 'Rename' }).waitFor({ state: 'detached' });
    if (phone) await page.getByRole('button', { name: 'Sessions' }).click();

    await page.keyboard.press('Control+k');
    await page.getByRole('combobox', { name: 'Search all sessions' }).fill('ORM');
    await page.locator('.hit').first().waitFor();
    await shot(page, `${label}-search`);
    await page.keyboard.press('Escape');

    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('dialog', { name: 'Settings' }).waitFor();
    await shot(page, `${label}-settings`);
    await page.keyboard.press('Escape');
    await page.getByRole('dialog', { name: 'Settings' }).waitFor({ state: 'detached' });

    await page.locator('.storage-usage').click();
    await page.getByRole('button', { name: 'Check archive' }).click();
    await page.locator('.integrity', { hasText: 'Archive check: ok' }).waitFor();
    await shot(page, `${label}-storage`);
    assert.deepEqual(page.problems, []);
    await page.close();
  });
}

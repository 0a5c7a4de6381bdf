// Sync as a user reads it, at a laptop's 1280 × 720: after "Sync this archive" the dialog's status
// line is in view beside the button; a refusal is said in words in the header, which still fits;
// "N waiting" counts the messages and renames made while offline, not the archive's bookkeeping.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, launchBrowser, openPage, ready, replyDone, send } from '../harness.js';
import { script, turnOnSync, waitSynced } from '../sync-support.js';

const nats = { dir: mkdtempSync(join(tmpdir(), 'cowork-nats-')) };
const app = {};

before(async () => {
  nats.env = script('nats.sh', ['start', nats.dir], { COWORK_NATS_SPACES: 'alice bob' });
  app.server = await startServer();
});

after(async () => {
  await app.server?.stop();
  try {
    script('nats.sh', ['stop', nats.dir]);
  } finally {
    rmSync(nats.dir, { recursive: true, force: true });
  }
});

/** Whether `locator`'s element is what the user sees at its centre (not scrolled away or covered). */
async function seen(locator) {
  return locator.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const x = r.left + r.width / 2;
    const y = r.top + Math.min(r.height / 2, 8);
    if (x < 0 || y < 0 || x > innerWidth || y > innerHeight) return false;
    const top = document.elementFromPoint(x, y);
    return top === el || el.contains(top);
  });
}

test('after "Sync this archive" the status is in view; the header says the refusal in words and fits at 1280 px', async () => {
  const laptop = await launchBrowser();
  try {
    const a = await openPage(laptop.context, app.server.url);
    await ready(a);
    assert.equal(a.viewportSize().width, 1280);
    const dialog = await turnOnSync(a, { server: nats.env.NATS_WS_URL, device: 'Laptop', password: 'not-alices-password', keepOpen: true });
    const state = dialog.locator('.sync-state');
    await state.filter({ hasText: /refused user alice/ }).waitFor({ timeout: 20_000 });
    assert.ok(await seen(state), `the status line "${await state.innerText()}" is where the user looks, beside the button`);
    assert.ok(await seen(dialog.getByRole('button', { name: 'Sync this archive' })), 'and so is the button');
    await dialog.getByRole('button', { name: 'Close' }).click();

    const status = a.locator('.sync-status.failed');
    const words = await status.innerText();
    assert.match(words, /^Sync error: The sync server refused user alice$/, 'the header says what went wrong');
    assert.match(await status.getAttribute('title'), /check the user name and password/, 'and its tooltip what to do');
    const fit = await a.evaluate(() => {
      const header = document.querySelector('.app-header');
      const status = document.querySelector('.sync-status');
      const off = [...header.querySelectorAll('button')].filter((b) => b.getBoundingClientRect().right > innerWidth + 0.5);
      return {
        header: header.scrollWidth <= header.clientWidth,
        // Its whole text shown, or what is cut and why (each header item's width).
        status: status.scrollWidth <= status.clientWidth ||
          `${status.scrollWidth} > ${status.clientWidth} (header ${header.clientWidth}: ${[...header.children].map((c) => Math.round(c.getBoundingClientRect().width)).join(' ')})`,
        off: off.map((b) => b.textContent),
      };
    });
    assert.deepEqual(fit, { header: true, status: true, off: [] }, 'the header fits, its status whole, every button on screen');
    assert.deepEqual(a.problems, [], 'no errors in the page');
  } finally {
    await laptop.close();
  }
});

test('"N waiting" counts the messages and the rename made offline', async () => {
  const phone = await launchBrowser();
  try {
    const b = await openPage(phone.context, app.server.url);
    await ready(b);
    const first = 'waiting e2e: the first question';
    await send(b, first);
    await b.locator('.turn[data-role="assistant"]').first().waitFor({ timeout: 20_000 });
    await replyDone(b);
    await turnOnSync(b, { server: nats.env.NATS_WS_URL, device: 'Phone', user: 'bob' });
    await waitSynced(b);

    await phone.context.setOffline(true);
    await b.locator('.sync-status.offline').waitFor({ timeout: 20_000 });
    for (const text of ['waiting e2e: asked offline', 'waiting e2e: and again']) {
      await send(b, text);
      await b.locator('.turn[data-role="user"]', { hasText: text }).waitFor({ timeout: 20_000 });
    }
    const row = b.locator('.session-row', { hasText: first });
    await row.getByRole('button', { name: /^Actions for/ }).click();
    await row.getByRole('menuitem', { name: 'Rename' }).click();
    const box = b.getByLabel('Session name');
    await box.fill('Waiting, renamed');
    await box.press('Enter');
    const status = b.locator('.sync-status');
    await status.filter({ hasText: /waiting/ }).waitFor({ timeout: 10_000 });
    await b.waitForTimeout(1000); // the count as it settles, not a passing figure
    assert.equal(await status.innerText(), 'Offline · 3 waiting', 'two messages and a rename');

    await phone.context.setOffline(false);
    await waitSynced(b, 30_000);
    assert.deepEqual(b.problems, [], 'no errors in the page');
  } finally {
    await phone.close();
  }
});

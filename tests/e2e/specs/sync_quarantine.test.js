// Sync survives a bad message, through a real NATS JetStream server on loopback: a change that cannot be
// applied (an attachment whose bytes do not match its SHA-256; a kind of change from a newer Cowork) is
// published into a space by a broken device ("Birch") between two of the laptop's exchanges. The phone,
// which reads them all in one batch when it comes back online, applies everything else, says in Settings →
// Sync which changes it kept aside and why, and keeps syncing what comes after.
//
// The broken device is played by the page itself: the test loads the app's own sync transport (the bundle
// the page names in <meta name="cowork-sync">) and publishes the messages with it, sealed with the space's
// key as a real device would.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { script } from '../sync-support.js';
import { startServer, launchBrowser, openPage, ready, replyDone, send } from '../harness.js';

const nats = { dir: mkdtempSync(join(tmpdir(), 'cowork-nats-')) };
const app = {};
const PASSPHRASE = 'correct horse battery staple';

before(async () => {
  nats.env = script('nats.sh', ['start', nats.dir]);
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

async function turnOnSync(page, device) {
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.getByRole('tab', { name: 'Sync', exact: true }).click();
  const dialog = page.locator('.sync-dialog');
  await dialog.locator('input[name="sync-server"]').fill(nats.env.NATS_WS_URL);
  await dialog.locator('input[name="sync-user"]').fill('alice');
  await dialog.locator('input[name="sync-password"]').fill('alice-secret');
  await dialog.locator('input[name="sync-passphrase"]').fill(PASSPHRASE);
  await dialog.locator('input[name="sync-device"]').fill(device);
  await dialog.getByRole('button', { name: 'Sync this archive' }).click();
  await dialog.getByRole('button', { name: 'Close' }).click();
}

async function exchange(page, text) {
  await send(page, text);
  await page.locator('.turn[data-role="user"]', { hasText: text }).first().waitFor({ timeout: 20_000 });
  await replyDone(page);
}

/** Publishes `bodies` into alice's space from `page`, as a device would, with the app's own transport. */
async function publishAsAnotherDevice(page, bodies) {
  return page.evaluate(
    async ({ url, passphrase, bodies }) => {
      if (!globalThis.CoworkSync) {
        const src = document.querySelector('meta[name="cowork-sync"]').content;
        await new Promise((resolve, reject) => {
          const script = Object.assign(document.createElement('script'), { src, onload: resolve, onerror: reject });
          document.head.append(script);
        });
      }
      const { connect, openSpace } = globalThis.CoworkSync;
      const connection = await connect({ url, user: 'alice', pass: 'alice-secret', name: 'birch' });
      try {
        const space = await openSpace(connection, { space: 'alice', passphrase });
        return await space.publish(bodies.map((body) => ({ id: JSON.parse(body).id, subject: 'turn.birch', body })));
      } finally {
        await connection.close();
      }
    },
    { url: nats.env.NATS_WS_URL, passphrase: PASSPHRASE, bodies },
  );
}

/** A turn from "Birch" carrying a file whose bytes are not the ones its SHA-256 names. */
function alteredAttachment(n) {
  const bytes = Buffer.from('# the other plan');
  return JSON.stringify({
    id: `birch-device:${n}`,
    device_id: 'birch-device',
    device_name: 'Birch',
    seq: n,
    change: {
      turn_added: {
        gid: '01900000-0000-7000-8000-00000000b1c4',
        session_id: '01900000-0000-7000-8000-0000000b1c40',
        workspace: 'default',
        turn_number: 1,
        prev_gid: null,
        role: 'user',
        content: 'quarantine e2e: see the plan',
        tool_calls: [],
        tool_call_id: null,
        tool_name: null,
        token_count: 8,
        status: 'complete',
        created_at: Date.now(),
        metadata: {},
        search_extra: '',
        attachments: [
          {
            // The SHA-256 of "# the plan", not of the bytes that travel.
            attachment: {
              sha256: '48b9d53cb9ee58eb61d6fa2344add0152f083b4d779d25278516b5c3c065444c',
              name: 'plan.md',
              mime: 'text/markdown',
              size: bytes.length,
              kind: 'text',
            },
            data: bytes.toString('base64'),
          },
        ],
      },
    },
  });
}

/** A change of a kind this version does not know, as a newer Cowork on "Birch" would write it. */
function newerKind(n) {
  return JSON.stringify({
    id: `birch-device:${n}`,
    device_id: 'birch-device',
    device_name: 'Birch',
    seq: n,
    change: { task_added: { task_id: 'birch-task-1', turn_gid: '01900000-0000-7000-8000-00000000b1c4' } },
  });
}

test('a change that cannot be applied is kept aside and shown; everything else applies and sync goes on', async (t) => {
  const laptop = await launchBrowser();
  const phone = await launchBrowser();
  try {
    const a = await openPage(laptop.context, app.server.url);
    await ready(a);
    const first = 'quarantine e2e: the quokka release plan';
    await exchange(a, first);
    await turnOnSync(a, 'Laptop');
    await a.locator('.sync-status', { hasText: /^Synced$/ }).waitFor({ timeout: 30_000 });
    const b = await openPage(phone.context, app.server.url);
    await ready(b);
    await turnOnSync(b, 'Phone');
    await b.locator('.sync-status', { hasText: /^Synced$/ }).waitFor({ timeout: 30_000 });
    await b.locator('.session', { hasText: first }).click({ timeout: 20_000 });

    // The phone goes offline; meanwhile the laptop writes, "Birch" publishes two changes the phone cannot
    // apply, and the laptop writes again: back online, the phone reads all of it in one batch.
    await phone.context.setOffline(true);
    await b.locator('.sync-status.offline').waitFor({ timeout: 20_000 });
    const before = 'quarantine e2e: written before the bad changes';
    await exchange(a, before);
    await a.locator('.sync-status', { hasText: /^Synced$/ }).waitFor({ timeout: 30_000 });
    assert.equal(await publishAsAnotherDevice(a, [alteredAttachment(1), newerKind(2)]), 2, 'the server took both');
    const afterwards = 'quarantine e2e: written after the bad changes';
    await exchange(a, afterwards);
    await a.locator('.sync-status', { hasText: /^Synced$/ }).waitFor({ timeout: 30_000 });
    await phone.context.setOffline(false);

    // Everything else applied: both exchanges, in their session.
    for (const text of [before, afterwards]) {
      await b.locator('.turn[data-role="user"]', { hasText: text }).waitFor({ timeout: 30_000 });
    }
    await b.locator('.sync-status', { hasText: /^Synced$/ }).waitFor({ timeout: 30_000 });
    assert.equal(await b.locator('.session', { hasText: 'see the plan' }).count(), 0, 'the altered turn was not applied');

    // The sync dialog says what was kept aside, from which device, and why.
    await b.getByRole('button', { name: 'Settings' }).click();
    await b.getByRole('tab', { name: 'Sync', exact: true }).click();
    const kept = b.locator('.sync-dialog .sync-kept li');
    await kept.first().waitFor({ timeout: 10_000 });
    const lines = await kept.allInnerTexts();
    t.diagnostic(lines.join('\n'));
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.match(lines[0], /^1 change from Birch could not be applied: the synced attachment plan\.md does not match its SHA-256\. Kept on this device/);
    assert.match(lines[1], /^1 change from Birch could not be applied: it is a kind of change \(“task_added”\) from a newer version of Cowork: update Cowork on this device\./);
    await b.locator('.sync-dialog').getByRole('button', { name: 'Close' }).click();

    // Sync goes on: what the laptop writes next reaches the phone, and what the phone writes reaches the laptop.
    const next = 'quarantine e2e: and the wombat rollback';
    await exchange(a, next);
    await b.locator('.turn[data-role="user"]', { hasText: next }).waitFor({ timeout: 15_000 });
    const reply = 'quarantine e2e: the phone answers';
    await exchange(b, reply);
    await a.locator('.turn[data-role="user"]', { hasText: reply }).waitFor({ timeout: 15_000 });
    assert.equal(await a.locator('.sync-status', { hasText: 'error' }).count(), 0, 'the laptop never stopped');
  } finally {
    await Promise.all([laptop.close(), phone.close()]);
  }
});

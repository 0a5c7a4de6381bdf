// MCP servers travel with their workspace (spec §16), their secrets do not: a laptop adds a server with a
// bearer token and one that signs in with OAuth and signs in to it; with sync on (a real NATS JetStream
// server on loopback, scripts/nats.sh) a phone gets both servers in Settings → Tools, with their
// policies, but neither the token nor the sign-in: the OAuth server asks the phone to sign in, and the
// phone's export holds no token. Real MCP servers on loopback (scripts/mcp-servers.sh).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { script, turnOnSync } from '../sync-support.js';
import { startServer, launchBrowser, openPage, ready, openSettings, exportArchive } from '../harness.js';
import { useMcpServers } from '../mcp-support.js';

const mcp = useMcpServers();
const nats = mkdtempSync(join(tmpdir(), 'cowork-nats-'));
const env = {};
const app = {};

before(async () => {
  Object.assign(env, mcp.env, script('nats.sh', ['start', nats]));
  app.server = await startServer();
});
after(async () => {
  await app.server?.stop();
  try {
    script('nats.sh', ['stop', nats]);
  } finally {
    rmSync(nats, { recursive: true, force: true });
  }
});

/** Adds a server in Settings → Tools and waits until its status is `state`; leaves the dialog open. */
async function addServer(dialog, name, url, { token = '', oauth = false, state }) {
  await dialog.getByLabel('Name', { exact: true }).fill(name);
  await dialog.getByLabel('URL', { exact: true }).fill(url);
  if (token) await dialog.getByLabel(/Bearer token/).fill(token);
  if (oauth) await dialog.getByLabel(/^Sign-in/).selectOption('oauth');
  await dialog.getByRole('button', { name: 'Add server' }).click();
  const server = dialog.locator(`.mcp-server[data-server="${name}"]`);
  await server.locator(`.mcp-status.${state}`).waitFor({ timeout: 30_000 });
  return server;
}

async function closeSettings(dialog) {
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
}

test('a second device gets the workspace\'s MCP servers without their secrets, and asks to sign in', async () => {
  const laptop = await launchBrowser();
  const phone = await launchBrowser();
  const token = 'bearer-token-never-synced-7f3a';
  try {
    const a = await openPage(laptop.context, app.server.url, { expectLoadFailuresFrom: mcp.origins() });
    await ready(a);
    let dialog = await openSettings(a, 'Tools');
    const everything = await addServer(dialog, 'everything', env.MCP_EVERYTHING_URL, { token, state: 'connected' });
    await everything.getByLabel('Approval of echo').selectOption({ label: 'Never ask' });
    await dialog.locator('.mcp-note', { hasText: 'Saved.' }).waitFor();
    const secure = await addServer(dialog, 'secure', env.MCP_OAUTH_URL, { oauth: true, state: 'needs-sign-in' });
    const [popup] = await Promise.all([a.waitForEvent('popup'), secure.getByRole('button', { name: 'Sign in' }).click()]);
    await popup.waitForEvent('close', { timeout: 30_000 });
    await secure.locator('.mcp-status.connected').waitFor({ timeout: 30_000 });
    await closeSettings(dialog);
    await turnOnSync(a, { server: env.NATS_WS_URL, device: 'Laptop' });
    await a.locator('.sync-status', { hasText: 'Synced' }).waitFor({ timeout: 30_000 });

    const b = await openPage(phone.context, app.server.url, { expectLoadFailuresFrom: mcp.origins() });
    await ready(b);
    await turnOnSync(b, { server: env.NATS_WS_URL, device: 'Phone' });
    await b.locator('.sync-status', { hasText: 'Synced' }).waitFor({ timeout: 30_000 });
    dialog = await openSettings(b, 'Tools');
    // The servers came with the workspace, with the policy chosen on the laptop.
    const got = dialog.locator('.mcp-server[data-server="everything"]');
    await got.locator('.mcp-status.connected').waitFor({ timeout: 30_000 });
    assert.equal(await got.getByLabel('Approval of echo').evaluate((s) => s.selectedOptions[0].textContent), 'Never ask');
    // The sign-in did not: the phone is asked to sign in itself.
    const asks = dialog.locator('.mcp-server[data-server="secure"]');
    await asks.locator('.mcp-status.needs-sign-in').waitFor({ timeout: 30_000 });
    await asks.getByRole('button', { name: 'Sign in' }).waitFor();
    await closeSettings(dialog);

    const exported = JSON.stringify(await exportArchive(b));
    assert.ok(exported.includes(env.MCP_OAUTH_URL), 'the phone\'s archive holds the servers');
    assert.ok(!exported.includes(token), 'but not the laptop\'s bearer token');
    assert.ok(!/access_token|refresh_token/.test(exported), 'nor any OAuth token');
    const secrets = await b.evaluate(async () => {
      const dir = await navigator.storage.getDirectory();
      const read = async (name) => (await (await dir.getFileHandle(name, { create: true })).getFile()).text();
      return (await read('cowork-mcp-secrets.json')) + (await read('cowork-mcp-oauth.json'));
    });
    assert.ok(!secrets.includes(token) && !secrets.includes('access_token'), 'nothing secret reached the phone\'s keeping');
  } finally {
    await laptop.close();
    await phone.close();
  }
});

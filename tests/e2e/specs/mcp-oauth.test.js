// Signing in to an MCP server that requires OAuth (spec §16), against the REAL OAuth-protected test
// server on loopback (scripts/mcp-servers.sh: MCP_OAUTH_URL, made of the official SDK's authorization
// server parts; its /authorize approves at once). Settings → Tools: a server added with OAuth needs
// sign-in; a sign-in window closed early, or one that comes back with a state Cowork did not send, says
// so and gets no token; Sign in through the window (Cowork's oauth/callback.html, Dynamic Client
// Registration on this http origin) connects and lists the tools; the demo model's call is approved,
// answered and archived; after the server expires every token the next call still works (refreshed,
// no second window); Sign out goes back to needs sign-in; the JSON Lines and Markdown exports hold none
// of the tokens the server issued, nor the words access_token / refresh_token.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { useServerAndBrowser, openPage, ready, replyDone, send, openSettings, exportArchive } from '../harness.js';
import { useMcpServers } from '../mcp-support.js';

const app = useServerAndBrowser();
const mcp = useMcpServers();

/** What the test server did so far (registrations, codes, refreshes, calls…). */
async function stats() {
  return (await fetch(`${mcp.env.MCP_OAUTH_ADMIN}/stats`)).json();
}

/** Presses Sign in and returns the sign-in window. */
async function signIn(page, server) {
  const [popup] = await Promise.all([page.waitForEvent('popup'), server.getByRole('button', { name: 'Sign in' }).click()]);
  return popup;
}

async function download(page, click) {
  const [file] = await Promise.all([page.waitForEvent('download'), click()]);
  return readFileSync(await file.path(), 'utf8');
}

test('OAuth from the page: sign in through the window, calls refreshed after expiry, sign out, no token exported', async () => {
  const page = await openPage(app.browser.context, app.server.url, { expectLoadFailuresFrom: mcp.origins() });
  await ready(page);
  const popups = [];
  page.on('popup', (p) => popups.push(p));
  const authorize = new URL('/authorize', mcp.env.MCP_OAUTH_URL).href;

  let dialog = await openSettings(page, 'Tools');
  await dialog.getByLabel('Name', { exact: true }).fill('secure');
  await dialog.getByLabel('URL', { exact: true }).fill(mcp.env.MCP_OAUTH_URL);
  await dialog.getByLabel(/^Sign-in/).selectOption('oauth');
  await dialog.getByRole('button', { name: 'Add server' }).click();
  await dialog.locator('.mcp-note', { hasText: 'Saved.' }).waitFor();
  const server = dialog.locator('.mcp-server[data-server="secure"]');
  await server.locator('.mcp-status.needs-sign-in').waitFor({ timeout: 30_000 });
  assert.match(await server.locator('.mcp-status').innerText(), /Sign in/, 'the status says what to do');

  // A window closed before the authorization server answers: a clear message, no token.
  let reached;
  const arrived = new Promise((r) => (reached = r));
  await app.browser.context.route(`${authorize}**`, () => reached()); // the authorization page never answers
  const closed = await signIn(page, server);
  await arrived; // the window went to the authorization server
  await closed.close();
  await dialog.locator('.mcp-note', { hasText: 'closed before the sign-in finished' }).waitFor({ timeout: 30_000 });
  await server.locator('.mcp-status.needs-sign-in').waitFor();
  await app.browser.context.unroute(`${authorize}**`);

  // A window sent back with a state Cowork did not send (a forged callback): refused, no code exchanged.
  await app.browser.context.route(`${authorize}**`, (route) => {
    const back = new URL(new URL(route.request().url()).searchParams.get('redirect_uri'));
    back.search = '?code=forged-code&state=forged-state';
    return route.fulfill({ status: 302, headers: { location: back.href } });
  });
  await signIn(page, server);
  await dialog.locator('.mcp-note', { hasText: 'state this client did not send' }).waitFor({ timeout: 30_000 });
  await server.locator('.mcp-status.needs-sign-in').waitFor();
  await app.browser.context.unroute(`${authorize}**`);
  assert.equal((await stats()).codes, 0, 'no code was exchanged for a token so far');

  // Sign in: the window goes to the authorization server and back, and closes.
  const window = await signIn(page, server);
  await window.waitForEvent('close', { timeout: 30_000 });
  await server.locator('.mcp-status.connected').waitFor({ timeout: 30_000 });
  await server.locator('.mcp-tools code', { hasText: 'whoami' }).waitFor();
  const signedIn = await stats();
  assert.ok(signedIn.registrations >= 1, 'Cowork registered itself (DCR: an http origin has no client metadata document)');
  assert.equal(signedIn.codes, 1, 'one code exchanged');
  await server.getByLabel('Approval of whoami').selectOption({ label: 'Always ask' });
  await dialog.locator('.mcp-note', { hasText: 'Saved.' }).waitFor();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });

  // The demo model calls the tool; approved, answered and archived.
  const call = async (n) => {
    await send(page, '[[mcp:secure/whoami {}]]');
    const approval = page.getByRole('dialog', { name: 'Run whoami on the MCP server secure?' });
    await approval.waitFor({ timeout: 30_000 });
    await approval.getByRole('button', { name: 'Approve' }).click();
    const cards = page.locator('.turn[data-role="tool"]', { hasText: 'signed in as client' });
    await cards.nth(n - 1).waitFor({ timeout: 30_000 });
    await replyDone(page);
  };
  await page.getByRole('button', { name: '+ New session' }).click();
  await call(1);
  assert.equal((await stats()).calls, 1);

  // Every token expires; the next call still works: refreshed, without a second window.
  await fetch(`${mcp.env.MCP_OAUTH_ADMIN}/expire`, { method: 'POST' });
  const windows = popups.length;
  await call(2);
  const after = await stats();
  assert.equal(after.calls, 2);
  assert.ok(after.refreshes >= 1, 'the token was refreshed');
  assert.equal(popups.length, windows, 'no second sign-in window');

  // Sign out: back to needs sign-in, on this device.
  dialog = await openSettings(page, 'Tools');
  const again = dialog.locator('.mcp-server[data-server="secure"]');
  await again.locator('.mcp-status.connected').waitFor({ timeout: 30_000 });
  await again.getByRole('button', { name: 'Sign out' }).click();
  await again.locator('.mcp-status.needs-sign-in').waitFor({ timeout: 30_000 });
  await again.getByRole('button', { name: 'Sign in' }).waitFor();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });

  // No token in the exports: neither the JSON Lines archive nor the session's Markdown.
  const tokens = await (await fetch(`${mcp.env.MCP_OAUTH_ADMIN}/tokens`)).json();
  assert.ok(tokens.length >= 4, 'the server issued tokens (a sign-in and a refresh, each an access and a refresh token)');
  const lines = JSON.stringify(await exportArchive(page));
  assert.ok(lines.includes('signed in as client'), 'the tool results are archived and exported');
  assert.ok(lines.includes(mcp.env.MCP_OAUTH_URL), 'the server is exported with its workspace');
  await page.locator('.session-row').first().getByRole('button', { name: /^Actions for/ }).click();
  const markdown = await download(page, () => page.getByRole('menuitem', { name: 'Export as Markdown' }).click());
  assert.match(markdown, /signed in as client/);
  for (const [what, text] of [['JSON Lines', lines], ['Markdown', markdown]]) {
    for (const token of tokens) assert.ok(!text.includes(token), `no issued token in the ${what} export`);
    assert.doesNotMatch(text, /access_token|refresh_token/, `the ${what} export names no token field`);
  }
  assert.deepEqual(page.problems, []);
  await page.close();
});

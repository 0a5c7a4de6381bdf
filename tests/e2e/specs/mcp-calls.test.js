// MCP calls run by the page (spec §16; web/mcp/host.mjs) against REAL servers on loopback: the reference
// server-everything of scripts/mcp-servers.sh, and one of this test's own that it kills in the middle
// of a call. A long-running tool's progress shows on its card while it runs and Stop cancels it (the
// server is sent, and accepts, `notifications/cancelled`); an elicitation request shows as a form the
// user fills in, whose answer the server gets; a server that dies mid-call fails the call with a clear
// message, archived as failed, and the next message is answered.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { useServerAndBrowser, openPage, ready, replyDone, send, openSettings, exportArchive } from '../harness.js';
import { useMcpServers } from '../mcp-support.js';
import { startEverything } from '../../../web/mcp/support/servers.mjs';

const app = useServerAndBrowser();
const mcp = useMcpServers();

/** Adds a server in Settings → Tools (for the current workspace) and waits until it is connected. */
async function addServer(page, name, url) {
  const dialog = await openSettings(page, 'Tools');
  await dialog.getByLabel('Name', { exact: true }).fill(name);
  await dialog.getByLabel('URL', { exact: true }).fill(url);
  await dialog.getByRole('button', { name: 'Add server' }).click();
  await dialog.locator('.mcp-note', { hasText: 'Saved.' }).waitFor();
  await dialog.locator(`.mcp-server[data-server="${name}"] .mcp-status.connected`).waitFor({ timeout: 30_000 });
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
}

/** The server's answer to the next JSON-RPC message `method` the page sends. */
function answerTo(page, method) {
  return page.waitForResponse((r) => (r.request().postData() ?? '').includes(`"method":"${method}"`), { timeout: 30_000 });
}

test('a long-running tool shows its progress on its card; Stop cancels it at the server; the next message works', async () => {
  const page = await openPage(app.browser.context, app.server.url, { expectLoadFailuresFrom: mcp.origins() });
  await ready(page);
  await addServer(page, 'everything', mcp.env.MCP_EVERYTHING_URL);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, '[[mcp:everything/trigger-long-running-operation {"duration": 120, "steps": 120}]]');
  const card = page.locator('.turn[data-role="assistant"] .tool-call', { hasText: 'everything__trigger-long-running-operation' });
  const progress = card.locator('.tool-progress[role="status"]');
  await progress.filter({ hasText: /^Progress 1 of 120$/ }).waitFor({ timeout: 30_000 });
  // It moves on while the call runs.
  await progress.filter({ hasText: /^Progress 2 of 120$/ }).waitFor({ timeout: 30_000 });

  const cancelled = answerTo(page, 'notifications/cancelled');
  await page.getByRole('button', { name: 'Stop' }).click();
  const stopped = page.locator('.turn[data-role="tool"]', { hasText: 'The call was stopped by the user' });
  await stopped.waitFor({ timeout: 30_000 });
  assert.match(await stopped.innerText(), /failed/, 'the stopped call is marked as failed');
  await replyDone(page);
  const answer = await cancelled;
  assert.equal(answer.status(), 202, 'the page sent notifications/cancelled, and the server accepted it');
  assert.ok(JSON.parse(answer.request().postData()).params.requestId !== undefined, 'naming the call');

  await send(page, 'And after the stopped call?');
  await page.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'And after the stopped call?' }).waitFor({ timeout: 30_000 });
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('an elicitation request shows as a form; what the user enters reaches the server', async () => {
  // The first test added server-everything to this workspace (the same browser profile).
  const page = await openPage(app.browser.context, app.server.url, { expectLoadFailuresFrom: mcp.origins() });
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, '[[mcp:everything/trigger-elicitation-request]]');
  // Not read-only: the call is approved first.
  const approval = page.getByRole('dialog', { name: 'Run trigger-elicitation-request on the MCP server everything?' });
  await approval.waitFor({ timeout: 30_000 });
  await approval.getByRole('button', { name: 'Approve' }).click();

  const form = page.getByRole('dialog', { name: 'The MCP server everything asks' });
  await form.waitFor({ timeout: 30_000 });
  assert.match(await form.innerText(), /Please provide inputs for the following fields/);
  // Accept with the required field empty: refused, naming it; nothing is sent yet.
  await form.getByRole('button', { name: 'Accept' }).click();
  await form.getByRole('alert').filter({ hasText: 'String: required.' }).waitFor();
  await form.getByLabel('String (required)').fill('Ada Lovelace');
  await form.getByLabel('Integer', { exact: true }).fill('7');
  await form.getByLabel('Legacy Titled Single Select Enum').selectOption({ label: 'Dogs' });
  await form.getByRole('button', { name: 'Accept' }).click();
  await form.waitFor({ state: 'detached' });

  const result = page.locator('.turn[data-role="tool"]', { hasText: 'User provided the requested information' });
  await result.waitFor({ timeout: 30_000 });
  await replyDone(page);
  const text = await result.textContent();
  assert.match(text, /- Name: Ada Lovelace/);
  assert.match(text, /- Favorite Integer: 7/);
  assert.match(text, /"legacyTitledEnum": "pet-2"/, 'the chosen option\'s value');
  assert.match(text, /"firstLine": "It was a dark and stormy night."/, 'a default left as it was');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a server that dies mid-call: the call fails saying so, is archived as failed, and the next message works', async () => {
  const mortal = await startEverything();
  mcp.children.push(mortal.child);
  const page = await openPage(app.browser.context, app.server.url, { expectLoadFailuresFrom: [...mcp.origins(), new URL(mortal.url).origin] });
  await ready(page);
  await addServer(page, 'mortal', mortal.url);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, '[[mcp:mortal/trigger-long-running-operation {"duration": 120, "steps": 120}]]');
  const card = page.locator('.turn[data-role="assistant"] .tool-call', { hasText: 'mortal__trigger-long-running-operation' });
  await card.locator('.tool-progress').waitFor({ timeout: 30_000 });
  const exited = new Promise((resolve) => mortal.child.once('exit', resolve));
  mortal.child.kill('SIGKILL');
  await exited;

  const failed = page.locator('.turn[data-role="tool"]', { hasText: 'Error from the MCP server mortal' });
  await failed.waitFor({ timeout: 60_000 });
  assert.match(await failed.innerText(), /failed/, 'marked as failed');
  await replyDone(page);
  await send(page, 'Still answering after the server died?');
  await page.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'Still answering after the server died?' }).waitFor({ timeout: 30_000 });

  const lines = await exportArchive(page);
  const turn = lines.find((l) => l.type === 'turn' && l.tool_name === 'mortal__trigger-long-running-operation');
  assert.ok(turn, 'the failed call is archived');
  assert.equal(turn.metadata.success, false);
  assert.match(turn.content, /^Error from the MCP server mortal: The server stopped answering in the middle of the request/);
  await page.close();
});

// Tools from MCP servers (spec §16) against the REAL reference servers on loopback
// (scripts/mcp-servers.sh): server-everything over Streamable HTTP, and a supergateway bridge that
// sends no CORS headers. A server is added in Settings → Tools and its tools listed; the demo model's
// [[mcp:server/tool {…}]] calls one; the approval card names server and tool; the result is shown in a
// tool card, archived (after a reload still there; its image exported byte for byte) and found by
// Ctrl+K; a server a page cannot read and an unreachable URL say why, and the next message still works.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useServerAndBrowser, openPage, ready, replyDone, send, openSettings, exportArchive } from '../harness.js';
import { useMcpServers } from '../mcp-support.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const app = useServerAndBrowser();
const mcp = useMcpServers();

/** Adds a server in Settings → Tools (for the current workspace) and waits for its status line. */
async function addServer(page, name, url, { token = '', state = 'connected' } = {}) {
  const dialog = await openSettings(page, 'Tools');
  await dialog.getByLabel('Name', { exact: true }).fill(name);
  await dialog.getByLabel('URL', { exact: true }).fill(url);
  if (token) await dialog.getByLabel(/Bearer token/).fill(token);
  await dialog.getByRole('button', { name: 'Add server' }).click();
  await dialog.locator('.mcp-note', { hasText: 'Saved.' }).waitFor();
  const server = dialog.locator(`.mcp-server[data-server="${name}"]`);
  await server.locator(`.mcp-status.${state}`).waitFor({ timeout: 30_000 });
  return { dialog, server };
}

async function closeSettings(dialog) {
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
}

/** The PNG server-everything's get-tiny-image returns, as its source holds it. */
function tinyImage() {
  const file = join(root, 'tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/tools/get-tiny-image.js');
  return Buffer.from(readFileSync(file, 'utf8').match(/MCP_TINY_IMAGE = "([^"]+)"/)[1], 'base64');
}

test('an MCP server added in Settings → Tools: its tools called, approved, shown, archived and found', async () => {
  const page = await openPage(app.browser.context, app.server.url, { expectLoadFailuresFrom: mcp.origins() });
  await ready(page);
  const { dialog, server } = await addServer(page, 'everything', mcp.env.MCP_EVERYTHING_URL);
  const tools = server.locator('.mcp-tools');
  for (const name of ['echo', 'get-tiny-image', 'get-sum']) await tools.locator('code', { hasText: name }).first().waitFor();
  assert.match(await server.locator('.mcp-resources').innerText(), /\S/, 'its resources are listed');
  assert.match(await server.locator('.mcp-prompts').innerText(), /\S/, 'its prompts are listed');
  // echo says it only reads: asked for only because its policy says so.
  await server.getByLabel('Approval of echo').selectOption({ label: 'Always ask' });
  await dialog.locator('.mcp-note', { hasText: 'Saved.' }).waitFor();
  await closeSettings(dialog);

  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, '[[mcp:everything/echo {"message": "hello from the page"}]]');
  const approval = page.getByRole('dialog', { name: 'Run echo on the MCP server everything?' });
  await approval.waitFor({ timeout: 30_000 });
  assert.match(await approval.innerText(), /hello from the page/, 'the card shows the arguments');
  await approval.getByRole('button', { name: 'Approve' }).click();
  const reply = page.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'Echo: hello from the page' });
  await reply.waitFor({ timeout: 30_000 });
  await replyDone(page);
  const echoCard = page.locator('.turn[data-role="tool"]', { hasText: 'Echo: hello from the page' });
  assert.match(await echoCard.innerText(), /Result of everything__echo/);

  // A read-only tool runs without asking; its image is shown in the tool card.
  await send(page, '[[mcp:everything/get-tiny-image]]');
  await page.locator('.turn[data-role="assistant"] .turn-text', { hasText: "Here's the image you requested:" }).waitFor({ timeout: 30_000 });
  await replyDone(page);
  const imageCard = page.locator('.turn[data-role="tool"]', { hasText: 'MCP logo' });
  await imageCard.locator('img').waitFor({ timeout: 10_000 });
  assert.ok(await imageCard.locator('img').evaluate((img) => img.complete && img.naturalWidth > 0), 'the image is drawn');

  // Ctrl+K finds a word only the tool's result holds ("logo"), at the tool's turn.
  await page.keyboard.press('Control+k');
  const box = page.getByRole('combobox', { name: 'Search all sessions' });
  await box.fill('logo');
  const hit = page.locator('.hit').filter({ has: page.locator('mark') }).first();
  await hit.waitFor({ timeout: 10_000 });
  assert.match(await hit.innerText(), /The image above is the MCP logo/);
  await page.keyboard.press('Escape');

  // After a reload everything is still there: the server, its policy, the results.
  await page.reload();
  await ready(page);
  await page.locator('.turn[data-role="tool"]', { hasText: 'Echo: hello from the page' }).waitFor({ timeout: 20_000 });
  await page.locator('.turn[data-role="tool"] img').waitFor({ timeout: 20_000 });
  const again = await openSettings(page, 'Tools');
  const kept = again.locator('.mcp-server[data-server="everything"]');
  await kept.locator('.mcp-status.connected').waitFor({ timeout: 30_000 });
  assert.equal(await kept.getByLabel('Approval of echo').evaluate((s) => s.selectedOptions[0].textContent), 'Always ask');
  await closeSettings(again);

  // Exported: the whole result (structure and text) and the image byte for byte.
  const lines = await exportArchive(page);
  const image = tinyImage();
  const sha = createHash('sha256').update(image).digest('hex');
  const blob = lines.find((l) => l.type === 'blob' && l.sha256 === sha) ?? lines.find((l) => JSON.stringify(l).includes(sha));
  assert.ok(blob, `the image (sha256 ${sha}) is in the export`);
  assert.ok(JSON.stringify(lines).includes(image.toString('base64')), 'its bytes, as the server sent them');
  const toolTurn = lines.find((l) => l.type === 'turn' && l.tool_name === 'everything__get-tiny-image');
  assert.ok(toolTurn, 'the tool turn is exported');
  assert.deepEqual(toolTurn.metadata.result.content.map((c) => c.type), ['text', 'image', 'text'], 'the result whole');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a server without CORS and an unreachable one say why; the token stays out of the export; the next message works', async () => {
  const page = await openPage(app.browser.context, app.server.url, { expectLoadFailuresFrom: mcp.origins() });
  await ready(page);
  const secret = 'bearer-secret-5ad1f00d';
  const { dialog, server } = await addServer(page, 'files', mcp.env.MCP_FILESYSTEM_NOCORS_URL, { token: secret, state: 'no-cors' });
  assert.match(await server.locator('.mcp-status').innerText(), /CORS/);
  assert.match(await server.locator('.mcp-status').innerText(), /bridge/i, 'the remedy is named');
  await closeSettings(dialog);
  const gone = await addServer(page, 'gone', 'http://127.0.0.1:9/mcp', { state: 'unreachable' });
  assert.match(await gone.server.locator('.mcp-status').innerText(), /Nothing answered at http:\/\/127\.0\.0\.1:9\/mcp/);
  await closeSettings(gone.dialog);

  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'Still there after the broken servers?');
  await page.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'You said' }).waitFor({ timeout: 30_000 });
  await replyDone(page);

  const exported = JSON.stringify(await exportArchive(page));
  assert.ok(exported.includes(mcp.env.MCP_FILESYSTEM_NOCORS_URL), 'the server itself is exported with its workspace');
  assert.ok(!exported.includes(secret), 'the bearer token is not in the export');
  await page.close();
});

test('Stop cancels a long-running MCP tool: the call ends as stopped, and the conversation goes on', async () => {
  // The first test added server-everything to this workspace (the same browser profile).
  const page = await openPage(app.browser.context, app.server.url, { expectLoadFailuresFrom: mcp.origins() });
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, '[[mcp:everything/trigger-long-running-operation {"duration": 120, "steps": 120}]]');
  await page.locator('.turn[data-role="assistant"] .tool-call', { hasText: 'everything__trigger-long-running-operation' }).waitFor({ timeout: 30_000 });
  await page.getByRole('button', { name: 'Stop' }).click();
  const card = page.locator('.turn[data-role="tool"]', { hasText: 'was stopped by the user' });
  await card.waitFor({ timeout: 30_000 });
  assert.match(await card.innerText(), /failed/, 'the stopped call is marked as failed');
  await replyDone(page);
  await send(page, 'And after the stopped call?');
  await page.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'And after the stopped call?' }).waitFor({ timeout: 30_000 });
  await page.close();
});

// The reference filesystem server (@modelcontextprotocol/server-filesystem, a stdio server) behind the
// supergateway bridge with an Origin allow-list, started on loopback by scripts/mcp-servers.sh: added in
// Settings → Tools, the demo model writes a file into the server's temporary folder (a destructive
// tool: the user approves it) and reads it back (read-only: no approval); the file is on disk with the
// bytes written, and the result of the read is in the archive.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { useServerAndBrowser, openPage, ready, replyDone, send, openSettings, exportArchive } from '../harness.js';
import { useMcpServers } from '../mcp-support.js';

const app = useServerAndBrowser();
const mcp = useMcpServers();

test('the filesystem server behind a bridge: the model writes a file, it is on disk, and reads it back', async () => {
  const page = await openPage(app.browser.context, app.server.url, { expectLoadFailuresFrom: mcp.origins() });
  await ready(page);
  const dialog = await openSettings(page, 'Tools');
  await dialog.getByLabel('Name', { exact: true }).fill('files');
  await dialog.getByLabel('URL', { exact: true }).fill(mcp.env.MCP_FILESYSTEM_URL);
  await dialog.getByRole('button', { name: 'Add server' }).click();
  const server = dialog.locator('.mcp-server[data-server="files"]');
  await server.locator('.mcp-status.connected').waitFor({ timeout: 30_000 });
  for (const name of ['write_file', 'read_text_file']) await server.locator('.mcp-tools code', { hasText: name }).first().waitFor();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });

  const file = join(mcp.env.MCP_FS_ROOT, 'notes', 'plan.md');
  const content = '# Plan\n\nShip the MCP tools — written by Cowork’s model.\n';
  assert.ok(!existsSync(file));
  await page.getByRole('button', { name: '+ New session' }).click();
  // server-filesystem's folders must exist first; create_directory is destructive too.
  await send(page, `[[mcp:files/create_directory ${JSON.stringify({ path: dirname(file) })}]]`);
  let approval = page.getByRole('dialog', { name: 'Run create_directory on the MCP server files?' });
  await approval.waitFor({ timeout: 30_000 });
  await approval.getByRole('button', { name: 'Approve' }).click();
  await replyDone(page);
  await send(page, `[[mcp:files/write_file ${JSON.stringify({ path: file, content })}]]`);
  approval = page.getByRole('dialog', { name: 'Run write_file on the MCP server files?' });
  await approval.waitFor({ timeout: 30_000 });
  assert.match(await approval.innerText(), /plan\.md/, 'the card shows the path it writes');
  await approval.getByRole('button', { name: 'Approve' }).click();
  await page.locator('.turn[data-role="tool"]', { hasText: 'Successfully wrote' }).waitFor({ timeout: 30_000 });
  await replyDone(page);
  assert.equal(readFileSync(file, 'utf8'), content, 'the file is on disk with the bytes written');

  // read_text_file says it only reads: it runs without asking.
  await send(page, `[[mcp:files/read_text_file ${JSON.stringify({ path: file })}]]`);
  await page.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'files__read_text_file returned: # Plan' }).waitFor({ timeout: 30_000 });
  await replyDone(page);

  const lines = await exportArchive(page);
  const read = lines.find((l) => l.type === 'turn' && l.tool_name === 'files__read_text_file');
  assert.ok(read, 'the read is archived as a tool turn');
  assert.equal(read.content, content, 'with the file’s text whole');
  assert.deepEqual(page.problems, []);
  await page.close();
});

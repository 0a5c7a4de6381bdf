// Resources and prompts of MCP servers in the composer (spec §16), against the REAL server-everything
// on loopback (scripts/mcp-servers.sh): its resource attached from the Resource menu goes with the
// message to the model and is archived and exported byte for byte, named by the resource; `/` lists its
// prompts (a listbox driven by the keyboard), one without arguments is inserted at once, one with
// arguments asks for them in a form, and the text inserted is the server's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useServerAndBrowser, openPage, ready, replyDone, openSettings, exportArchive } from '../harness.js';
import { useMcpServers } from '../mcp-support.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const app = useServerAndBrowser();
const mcp = useMcpServers();

/** The bytes of one of server-everything's static documents, as its package holds them. */
function everythingDoc(name) {
  return readFileSync(join(root, 'tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/docs', name));
}

/** Adds server-everything in Settings → Tools (for the current workspace), then closes Settings. */
async function addEverything(page) {
  const dialog = await openSettings(page, 'Tools');
  await dialog.getByLabel('Name', { exact: true }).fill('everything');
  await dialog.getByLabel('URL', { exact: true }).fill(mcp.env.MCP_EVERYTHING_URL);
  await dialog.getByRole('button', { name: 'Add server' }).click();
  await dialog.locator('.mcp-server[data-server="everything"] .mcp-status.connected').waitFor({ timeout: 30_000 });
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
}

test("a server's resource attached from the composer is sent, archived and exported byte for byte", async () => {
  const page = await openPage(app.browser.context, app.server.url, { expectLoadFailuresFrom: mcp.origins() });
  await ready(page);
  await addEverything(page);
  await page.getByRole('button', { name: '+ New session' }).click();

  await page.getByRole('button', { name: 'Resource', exact: true }).click();
  const menu = page.getByRole('listbox', { name: 'Resources from MCP servers' });
  const option = menu.getByRole('option', { name: /^features\.md/ });
  await option.waitFor({ timeout: 30_000 });
  assert.match(await option.innerText(), /everything/, 'the option names its server');
  await option.click();
  const chip = page.locator('.attachment-chips.pending .attachment-chip', { hasText: 'features.md' });
  await chip.waitFor({ timeout: 30_000 });

  const box = page.getByLabel('Message', { exact: true });
  await box.fill('What does this document say?');
  await box.press('Enter');
  // The demo model names the files the message carried.
  await page.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'features.md' }).waitFor({ timeout: 30_000 });
  await replyDone(page);
  await page.locator('.turn[data-role="user"] .attachment-chip', { hasText: 'features.md' }).waitFor();

  const doc = everythingDoc('features.md');
  const lines = await exportArchive(page);
  const sha = createHash('sha256').update(doc).digest('hex');
  const turn = lines.find((l) => l.type === 'turn' && (l.attachments ?? []).some((a) => a.name === 'features.md'));
  assert.ok(turn, 'the user turn carries the resource, named by it');
  const attachment = turn.attachments.find((a) => a.name === 'features.md');
  assert.equal(attachment.sha256, sha, 'the archived bytes are the server\'s, byte for byte');
  assert.equal(attachment.mime, 'text/markdown', 'with the type the server gave');
  const blob = lines.find((l) => l.type === 'blob' && l.sha256 === sha);
  assert.ok(blob && Buffer.from(blob.data, 'base64').equals(doc), 'the bytes are in the export');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test("typing / lists the servers' prompts; one is inserted at once, one with arguments asks for them", async () => {
  // The first test added server-everything to this workspace (the same browser profile).
  const page = await openPage(app.browser.context, app.server.url, { expectLoadFailuresFrom: mcp.origins() });
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  const box = page.getByLabel('Message', { exact: true });

  // "/" opens the listbox; typing filters it; Esc closes it and leaves the text.
  await box.fill('/');
  const menu = page.getByRole('listbox', { name: 'Prompts from MCP servers' });
  await menu.getByRole('option', { name: /^Simple Prompt/ }).waitFor({ timeout: 30_000 });
  await menu.getByRole('option', { name: /^Arguments Prompt/ }).waitFor();
  await box.press('Escape');
  await menu.waitFor({ state: 'detached' });
  assert.equal(await box.inputValue(), '/');

  // Without arguments: the arrows move the active option (which the box names), Enter inserts it.
  await box.fill('/simple');
  await menu.getByRole('option', { name: /^Simple Prompt/ }).waitFor({ timeout: 30_000 });
  assert.equal(await menu.getByRole('option').count(), 1, 'the menu is filtered by what follows /');
  const active = await box.getAttribute('aria-activedescendant');
  assert.equal(await menu.getByRole('option', { selected: true }).getAttribute('id'), active);
  await box.press('Enter');
  await page.waitForFunction(() => document.getElementById('composer-input').value === 'This is a simple prompt without arguments.');
  await menu.waitFor({ state: 'detached' });

  // With arguments: chosen by the keyboard, a form asks for them, and the server's text comes back.
  await box.fill('/');
  await menu.getByRole('option', { name: /^Simple Prompt/ }).waitFor({ timeout: 30_000 });
  const options = await menu.getByRole('option').allInnerTexts();
  const index = options.findIndex((o) => o.startsWith('Arguments Prompt'));
  for (let i = 0; i < index; i++) await box.press('ArrowDown');
  assert.match(await menu.getByRole('option', { selected: true }).innerText(), /^Arguments Prompt/);
  await box.press('Enter');
  const form = page.getByRole('form', { name: 'Arguments of the prompt Arguments Prompt' });
  await form.getByLabel('city (required)').fill('Lisbon');
  await form.getByRole('button', { name: 'Insert' }).click();
  await page.waitForFunction(() => document.getElementById('composer-input').value === "What's weather in Lisbon?");

  // The inserted text is a message like any other.
  await box.press('Enter');
  await page.locator('.turn[data-role="user"]', { hasText: "What's weather in Lisbon?" }).waitFor({ timeout: 30_000 });
  await replyDone(page);
  assert.deepEqual(page.problems, []);
  await page.close();
});

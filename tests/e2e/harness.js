// Shared helpers for the end-to-end tests: start the dev server on loopback, launch headless
// Chromium with a fresh profile, and collect console errors. Everything started here stops by itself.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { crc32, deflateSync } from 'node:zlib';
import { before, after } from 'node:test';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const DIST = process.env.COWORK_DIST ?? join(root, 'dist');
const SERVER_BIN = process.env.COWORK_DEV_SERVER ?? join(root, 'target/debug/cowork-dev-server');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
// The semantic-recall model setup installs (scripts/model.sh), served at /models/.
const MODELS = process.env.COWORK_MODELS_DIR ?? join(root, 'target/models');

/** Starts the dev server on a free loopback port; resolves to { url, stop }. */
export async function startServer({ dist = DIST, lifetimeSecs = 600 } = {}) {
  const child = spawn(SERVER_BIN, ['--dist', dist, '--models', MODELS, '--addr', '127.0.0.1:0', '--exit-after', String(lifetimeSecs)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const url = await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`dev server did not start in 20 s: ${stderr}`)), 20_000);
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/Cowork dev server: (http:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        ok(m[1]);
      }
    });
    child.on('exit', (code) => fail(new Error(`dev server exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    stop: () =>
      new Promise((ok) => {
        if (child.exitCode !== null) return ok();
        child.once('exit', ok);
        child.kill('SIGINT');
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      }),
  };
}

/**
 * For a spec file: starts a dev server and a browser before its tests and stops both after them.
 * Returns `{ server, browser }`, filled in once the tests run.
 */
export function useServerAndBrowser() {
  const app = {};
  before(async () => {
    app.server = await startServer();
    app.browser = await launchBrowser();
  });
  after(async () => {
    await app.browser?.close();
    await app.server?.stop();
  });
  return app;
}

/**
 * Launches headless Chromium with a fresh profile; resolves to { context, close }. `args`: extra
 * flags; `options`: more context options (e.g. `{ locale: 'de-DE', timezoneId: 'Pacific/Auckland' }`).
 */
export async function launchBrowser({ args = [], options = {} } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'cowork-e2e-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    ...options,
    args: [
      '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-quic', ...args,
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Opens a page that records console errors and uncaught exceptions into `page.problems`. A load that
 * fails (an HTTP error status, nothing listening, no CORS headers) from one of `expectLoadFailuresFrom`
 * (origins) is not one: the page speaks to MCP servers itself (spec §16), where a 401 before sign-in or a
 * 400 to a revision probe is the protocol's course, and a dead server a case the UI names; the browser
 * logs each.
 */
export async function openPage(context, url, { expectLoadFailuresFrom = [] } = {}) {
  const page = await context.newPage();
  page.problems = [];
  page.on('console', (msg) => {
    const [text, from] = [msg.text(), msg.location()?.url ?? ''];
    const expected = expectLoadFailuresFrom.some(
      (origin) =>
        (text.startsWith('Failed to load resource:') && from.startsWith(`${origin}/`)) ||
        (text.includes('blocked by CORS policy') && text.includes(`'${origin}/`)),
    );
    if (msg.type() === 'error' && !expected) page.problems.push(`console.error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => page.problems.push(`uncaught: ${err.message}`));
  await page.goto(url);
  return page;
}

/** Waits until the storage worker has opened the archive. */
export async function ready(page) {
  await page.locator('.storage-status[data-state="ready"]').waitFor({ timeout: 30_000 });
}

/** Waits until the reply is complete and the composer accepts the next message. */
export async function replyDone(page) {
  await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 20_000 });
}

/** Types `text` into the composer and presses Enter. */
export async function send(page, text) {
  const box = page.getByLabel('Message', { exact: true });
  await box.fill(text);
  await box.press('Enter');
}

/** Clicks Export and resolves to the archive's JSON Lines, parsed. */
export async function exportArchive(page) {
  const { readFile } = await import('node:fs/promises');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export', exact: true }).click(),
  ]);
  const text = await readFile(await download.path(), 'utf8');
  return text.trim().split('\n').map((l) => JSON.parse(l));
}

/** Runs the archive check from the Storage panel; resolves to its verdict ("ok" when sound). */
export async function checkArchive(page) {
  await page.locator('.storage-usage').click();
  await page.getByRole('button', { name: 'Check archive' }).click();
  const status = page.locator('.dialog.storage .integrity');
  await status.filter({ hasNotText: 'checking' }).filter({ hasText: 'Archive check:' }).waitFor({ timeout: 30_000 });
  const verdict = (await status.innerText()).replace('Archive check: ', '').trim();
  await page.getByRole('button', { name: 'Close' }).click();
  return verdict;
}

/** A fresh directory on this machine, which is also the dev server's orchestrator's machine. */
export function projectDir(prefix = 'cowork-project-') {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Sets the open workspace's orchestrator directory (and whether the orchestrator asks before each
 * step) through Settings → Workspace, as a user would.
 */
export async function setOrchestratorDir(page, dir, { manual = false } = {}) {
  const dialog = await openSettings(page, 'Workspaces');
  await dialog.getByLabel(/Orchestrator directory/).fill(dir);
  await dialog.getByLabel('The orchestrator asks before each step').setChecked(manual);
  await dialog.getByRole('button', { name: 'Save workspace' }).click();
  await dialog.locator('.workspace-saved', { hasText: 'saved' }).waitFor();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
}

/** Opens Settings at one of its sections (`'Providers'`, `'Workspaces'`, `'Sync'`…); resolves to the dialog. */
export async function openSettings(page, section) {
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Settings' });
  await dialog.getByRole('tab', { name: section, exact: true }).click();
  return dialog;
}

/** Makes a workspace with Settings → Workspaces → New workspace; new sessions then go to it. */
export async function newWorkspace(page, name) {
  const dialog = await openSettings(page, 'Workspaces');
  await dialog.getByLabel('Name', { exact: true }).fill(name);
  await dialog.getByRole('button', { name: 'New workspace' }).click();
  await dialog.locator('.workspace-saved', { hasText: `\u201c${name}\u201d saved` }).waitFor();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
}

/** Imports `file` through Storage → Import files: the preview, then Import; `sessions` is how many it adds. */
export async function importFile(page, file, sessions, { timeout = 60_000 } = {}) {
  const count = `${sessions} session${sessions === 1 ? '' : 's'}`;
  await page.locator('.storage-usage').click();
  await page.getByLabel('Import files').setInputFiles(file);
  await page.locator('.import-result', { hasText: `→ ${count}` }).waitFor({ timeout });
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await page.locator('.import-result', { hasText: `Imported ${count}` }).waitFor({ timeout });
  await page.getByRole('button', { name: 'Close' }).click();
}

/** A real PNG of `w`×`h` pixels (RGB, a gradient seeded by `seed`). */
export function png(w, h, seed = 0) {
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body) >>> 0);
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const rows = [];
  for (let y = 0; y < h; y++) {
    rows.push(0);
    for (let x = 0; x < w; x++) rows.push((x * 4 + seed) & 255, (y * 5) & 255, (x + y + seed * 7) & 255);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.from(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

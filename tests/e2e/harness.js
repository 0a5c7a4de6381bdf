// Shared helpers for the end-to-end tests: start the dev server on loopback, launch headless
// Chromium with a fresh profile, and collect console errors. Everything started here stops by itself.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const DIST = process.env.COWORK_DIST ?? join(root, 'dist');
const SERVER_BIN = process.env.COWORK_DEV_SERVER ?? join(root, 'target/debug/cowork-dev-server');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** Starts the dev server on a free loopback port; resolves to { url, stop }. */
export async function startServer({ dist = DIST, lifetimeSecs = 600 } = {}) {
  const child = spawn(SERVER_BIN, ['--dist', dist, '--addr', '127.0.0.1:0', '--exit-after', String(lifetimeSecs)], {
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

/** Launches headless Chromium with a fresh profile; resolves to { browser, context, close }. */
export async function launchBrowser() {
  const profile = mkdtempSync(join(tmpdir(), 'cowork-e2e-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-quic',
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

/** Opens a page that records console errors and uncaught exceptions into `page.problems`. */
export async function openPage(context, url) {
  const page = await context.newPage();
  page.problems = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') page.problems.push(`console.error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => page.problems.push(`uncaught: ${err.message}`));
  await page.goto(url);
  return page;
}

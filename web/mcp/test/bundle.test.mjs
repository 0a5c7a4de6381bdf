// What the app ships: scripts/mcp-bundle.sh's mcp-<hash>.js, named in the page, loaded as the storage
// worker loads it (importScripts in a classic dedicated worker, global `CoworkMcp`) in headless Chromium,
// from a page of another origin than the servers: a server that allows that origin works; one that sends
// no CORS headers is said to be that, not "unreachable".
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { closedPort, ROOT, startServers } from '../support/servers.mjs';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

// The worker: loads the bundle, then for each message connects, lists the tools and calls echo.
const WORKER = `
importScripts(new URL(location.search.slice(1), location.href).href);
onmessage = async ({ data: { url } }) => {
  try {
    const conn = await CoworkMcp.connect({ url, name: 'test' });
    const tools = (await conn.listTools()).map((t) => t.name);
    const echo = await conn.callTool('echo', { message: 'from a worker' }).catch((e) => e);
    await conn.close();
    postMessage({ ok: true, transport: conn.info.transport, tools, echo });
  } catch (error) {
    postMessage({ ok: false, error, plain: !(error instanceof Error) });
  }
};`;

describe('the bundle the worker loads, in Chromium', { timeout: 120_000 }, () => {
  let stage;
  let file;
  let page;
  let servers;
  let web;
  let browser;
  let origin;

  before(async () => {
    stage = mkdtempSync(join(tmpdir(), 'cowork-stage-'));
    writeFileSync(join(stage, 'index.html'), '<!doctype html>\n<html>\n  <head>\n    <meta charset="utf-8" />\n  </head>\n</html>\n');
    execFileSync('sh', ['scripts/mcp-bundle.sh'], { cwd: ROOT, env: { ...process.env, TRUNK_STAGING_DIR: stage }, timeout: 60_000 });
    page = readFileSync(join(stage, 'index.html'), 'utf8');
    file = readdirSync(stage).find((name) => /^mcp-[0-9a-f]{16}\.js$/.test(name));
    writeFileSync(join(stage, 'worker.js'), WORKER);
    servers = startServers();
    web = createServer((req, res) => {
      const name = new URL(req.url, 'http://x').pathname.slice(1) || 'index.html';
      try {
        const body = readFileSync(join(stage, name.replace(/[^\w.-]/g, '')));
        res.writeHead(200, { 'content-type': name.endsWith('.js') ? 'text/javascript' : 'text/html' }).end(body);
      } catch {
        res.writeHead(404).end();
      }
    });
    await new Promise((resolve) => web.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${web.address().port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  });
  after(async () => {
    await browser?.close();
    web?.close();
    servers?.stop();
    if (stage) rmSync(stage, { recursive: true, force: true });
  });

  // Runs the worker of a fresh page of `origin` against `url`; answers what it posted.
  async function inWorker(url) {
    const tab = await browser.newPage();
    try {
      await tab.goto(`${origin}/index.html`);
      return await tab.evaluate(
        ({ bundle, url }) =>
          new Promise((resolve) => {
            const worker = new Worker(`./worker.js?./${bundle}`);
            worker.onmessage = ({ data }) => resolve(data);
            worker.onerror = (e) => resolve({ ok: false, error: { kind: 'worker', message: e.message } });
            worker.postMessage({ url });
          }),
        { bundle: file, url },
      );
    } finally {
      await tab.close();
    }
  }

  test('is named in the page and carries the licences of what it bundles', () => {
    assert.ok(file, 'mcp-<hash>.js is in the build');
    assert.ok(page.includes(`<meta charset="utf-8" />\n    <meta name="cowork-mcp" content="./${file}" />`), page);
    const head = readFileSync(join(stage, file), 'utf8').slice(0, 3000);
    for (const name of ['@modelcontextprotocol/client 2.4.0 (Apache-2.0)', 'zod', 'pkce-challenge']) {
      assert.ok(head.includes(name), `the licence header names ${name}`);
    }
  });

  test('a second build with nothing changed makes the same file', () => {
    const again = mkdtempSync(join(tmpdir(), 'cowork-stage-'));
    try {
      writeFileSync(join(again, 'index.html'), readFileSync(join(ROOT, 'index.html')));
      execFileSync('sh', ['scripts/mcp-bundle.sh'], { cwd: ROOT, env: { ...process.env, TRUNK_STAGING_DIR: again }, timeout: 60_000 });
      assert.ok(readdirSync(again).includes(file));
    } finally {
      rmSync(again, { recursive: true, force: true });
    }
  });

  test('in a worker, CoworkMcp connects to a server that allows the page\'s origin, lists and calls', async () => {
    const result = await inWorker(servers.MCP_EVERYTHING_URL);
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.equal(result.transport, 'streamable-http');
    assert.ok(result.tools.includes('echo'), String(result.tools));
    assert.deepEqual(result.echo, { content: [{ type: 'text', text: 'Echo: from a worker' }] });
  });

  test('a server that sends no CORS headers → kind "cors", naming the cause and the bridge recipe', async () => {
    const result = await inWorker(servers.MCP_FILESYSTEM_NOCORS_URL);
    assert.equal(result.ok, false, JSON.stringify(result));
    assert.equal(result.plain, true, 'a plain object, not an Error');
    assert.equal(result.error.kind, 'cors', JSON.stringify(result.error));
    assert.match(result.error.message, /sent no CORS headers for this origin/);
    assert.ok(result.error.message.includes(origin), result.error.message);
    assert.match(result.error.message, /supergateway or mcp-proxy/);
    // The same server with --cors works from the same page.
    const bridged = await inWorker(servers.MCP_FILESYSTEM_URL);
    assert.equal(bridged.ok, true, JSON.stringify(bridged));
    assert.ok(bridged.tools.includes('write_file'));
  });

  test('nothing listening → kind "unreachable", not "cors"', async () => {
    const result = await inWorker(`http://127.0.0.1:${await closedPort()}/mcp`);
    assert.equal(result.ok, false);
    assert.equal(result.error.kind, 'unreachable', JSON.stringify(result.error));
  });
});

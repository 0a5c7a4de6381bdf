// The MCP client's own share of "the model's tool call to the request leaving the page": in a dedicated
// worker of headless Chromium that loaded the built bundle (dist/mcp-*.js, as the storage worker does),
// the time from `conn.callTool(…)` to the moment its `tools/call` POST is handed to fetch, over N calls
// of server-everything's echo on loopback (scripts/mcp-servers.sh). Prints p50 and p99 (ms).
//   node web/mcp/bench/overhead.mjs [N=200]     (after `trunk build`, from the repository's root)
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { ROOT, startServers } from '../support/servers.mjs';

const N = Number(process.argv[2] ?? 200);
const DIST = join(ROOT, 'dist');
const bundle = readdirSync(DIST).find((f) => /^mcp-[0-9a-f]{16}\.js$/.test(f));
if (!bundle) throw new Error('no dist/mcp-<hash>.js: run trunk build first');

const WORKER = `
importScripts('/${bundle}');
onmessage = async ({ data: { url, n } }) => {
  let started = 0;
  const gaps = [];
  const fetch = (input, init) => {
    if (started && typeof init?.body === 'string' && init.body.includes('"tools/call"')) {
      gaps.push(performance.now() - started);
      started = 0;
    }
    return globalThis.fetch(input, init);
  };
  const conn = await CoworkMcp.connect({ url, name: 'bench', fetch });
  for (let i = 0; i < n; i++) {
    started = performance.now();
    await conn.callTool('echo', { message: 'bench ' + i });
  }
  await conn.close();
  postMessage(gaps);
};`;

const servers = startServers();
const web = createServer((req, res) => {
  if (req.url === '/worker.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(WORKER);
  if (req.url === `/${bundle}`) return res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(join(DIST, bundle)));
  res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>bench</title>');
});
await new Promise((resolve) => web.listen(0, '127.0.0.1', resolve));
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true });
try {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${web.address().port}/`);
  const gaps = await page.evaluate(
    ({ url, n }) =>
      new Promise((resolve) => {
        const worker = new Worker('/worker.js');
        worker.onmessage = ({ data }) => resolve(data);
        worker.postMessage({ url, n });
      }),
    { url: servers.MCP_EVERYTHING_URL, n: N },
  );
  gaps.sort((a, b) => a - b);
  const at = (q) => gaps[Math.min(gaps.length - 1, Math.ceil(q * gaps.length) - 1)];
  console.log(`MCP client overhead, callTool → tools/call handed to fetch, ${gaps.length} calls: p50 ${at(0.5).toFixed(2)} ms, p99 ${at(0.99).toFixed(2)} ms`);
} finally {
  await browser.close();
  web.close();
  servers.stop();
}

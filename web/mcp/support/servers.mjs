// Helpers of the tests in ../test/: the real MCP servers of scripts/mcp-servers.sh on loopback, started
// in a temporary directory and stopped (their temporary folder removed) by `stop()`.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const SCRIPT = join(ROOT, 'scripts/mcp-servers.sh');

/** Starts the servers; returns their URLs (MCP_EVERYTHING_URL, …, MCP_FS_ROOT) and `stop()`. */
export function startServers() {
  const dir = mkdtempSync(join(tmpdir(), 'cowork-mcp-servers-'));
  const env = join(dir, 'servers.env');
  const run = (cmd) => execFileSync('bash', [SCRIPT, cmd, env], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, COWORK_MCP_LIFETIME: '600' } });
  run('start');
  const urls = Object.fromEntries(
    readFileSync(env, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  return {
    ...urls,
    stop() {
      run('stop');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A port on 127.0.0.1 where nothing listens (the kernel's choice of a free one, closed again). */
export async function closedPort() {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * A fetch that records every request a connection sends (method, URL, the JSON-RPC body's `method` and
 * `params`) and the status it was answered with, for the tests to see what reached the server.
 */
export function recordingFetch() {
  const sent = [];
  const fetch = async (input, init = {}) => {
    let body;
    try {
      body = typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
    } catch {}
    const entry = { method: init.method ?? 'GET', url: String(input), rpc: body?.method, params: body?.params, headers: new Headers(init.headers) };
    sent.push(entry);
    const response = globalThis.fetch(input, init);
    // `answered`: settles once the server has answered (or the request failed).
    entry.answered = response.then((r) => (entry.status = r.status), () => undefined);
    return response;
  };
  return { fetch, sent };
}

/**
 * One server-everything of a test's own (Streamable HTTP), to kill: `{url, child}`. On `port` when
 * given (a server started again where one died), else on a free one.
 */
export async function startEverything(port) {
  port ??= await closedPort();
  const pkg = join(ROOT, 'tests/mcp');
  const child = spawn(process.execPath, ['--import', join(pkg, 'loopback.mjs'), join(pkg, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise((resolve, reject) => {
    let log = '';
    const seen = (d) => {
      log += d;
      if (log.includes('listening on port')) resolve();
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    child.on('exit', (code) => reject(new Error(`server-everything exited (${code}): ${log}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

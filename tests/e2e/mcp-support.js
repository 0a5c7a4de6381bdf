// What the MCP end-to-end specs share: the real MCP servers on loopback (scripts/mcp-servers.sh:
// server-everything, the filesystem server behind supergateway with and without CORS, the OAuth-protected
// server), started before a spec's tests and stopped after them.
import { before, after } from 'node:test';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const script = join(resolve(dirname(fileURLToPath(import.meta.url)), '../..'), 'scripts/mcp-servers.sh');

/**
 * Starts the MCP test servers before the spec's tests and stops them after (with `children`, processes
 * the spec started itself, killed first). `mcp.env` holds their URLs (MCP_EVERYTHING_URL, …, as the
 * script prints them); `mcp.origins()` their origins, for `openPage`'s `expectLoadFailuresFrom`: the
 * page speaks to them itself, and the browser logs their 4xx.
 */
export function useMcpServers() {
  const mcp = {
    dir: mkdtempSync(join(tmpdir(), 'cowork-mcp-e2e-')),
    env: {},
    children: [],
    origins: () => Object.values(mcp.env).filter((v) => /^https?:\/\//.test(v)).map((v) => new URL(v).origin),
  };
  before(() => {
    const out = execFileSync('bash', [script, 'start', join(mcp.dir, 'servers.env')], { encoding: 'utf8' });
    mcp.env = Object.fromEntries(out.trim().split('\n').filter((l) => l.includes('=')).map((l) => l.split(/=(.*)/s).slice(0, 2)));
  });
  after(() => {
    mcp.children.forEach((c) => c.kill('SIGKILL'));
    execFileSync('bash', [script, 'stop', join(mcp.dir, 'servers.env')]);
    rmSync(mcp.dir, { recursive: true, force: true });
  });
  return mcp;
}

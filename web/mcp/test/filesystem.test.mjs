// Cowork's MCP client against the reference @modelcontextprotocol/server-filesystem, a stdio server,
// reached over Streamable HTTP through supergateway on loopback (scripts/mcp-servers.sh): a file written
// through the server is on disk with the bytes written, and reads back through it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connect } from '../index.mjs';
import { startServers } from '../support/servers.mjs';

describe('server-filesystem behind supergateway', { timeout: 120_000 }, () => {
  let servers;
  let conn;

  before(async () => {
    servers = startServers();
    conn = await connect({ url: servers.MCP_FILESYSTEM_URL, name: 'files' });
  });
  after(async () => {
    await conn?.close();
    servers?.stop();
  });

  test('writes a file into the allowed folder and reads it back; the bytes are on disk', async () => {
    const tools = (await conn.listTools()).map((t) => t.name);
    assert.ok(tools.includes('write_file') && tools.includes('read_text_file'), String(tools));
    const path = join(servers.MCP_FS_ROOT, 'notes', 'hello.txt');
    const text = `Grüße from Cowork — ${new Date().toISOString()}\nline two ✓\n`;
    await conn.callTool('create_directory', { path: join(servers.MCP_FS_ROOT, 'notes') });
    const written = await conn.callTool('write_file', { path, content: text });
    assert.notEqual(written.isError, true, JSON.stringify(written));
    assert.deepEqual(readFileSync(path), Buffer.from(text, 'utf8'), 'the file on disk has the bytes written');
    const read = await conn.callTool('read_text_file', { path });
    assert.equal(read.content[0].text, text);
  });

  test('a path outside the allowed folder is the server\'s error, returned as a result (isError)', async () => {
    const result = await conn.callTool('read_text_file', { path: '/etc/hostname' });
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /denied|outside|not allowed/i);
  });
});

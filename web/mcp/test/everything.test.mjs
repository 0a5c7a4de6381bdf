// Cowork's MCP client (web/mcp/index.mjs, the module the worker loads) against the reference
// @modelcontextprotocol/server-everything on loopback (scripts/mcp-servers.sh): over Streamable HTTP,
// and over the legacy HTTP+SSE transport it falls back to.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { connect } from '../index.mjs';
import { recordingFetch, ROOT, startServers } from '../support/servers.mjs';

const { MCP_TINY_IMAGE } = await import(join(ROOT, 'tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/tools/get-tiny-image.js'));

describe('server-everything over Streamable HTTP', { timeout: 120_000 }, () => {
  let servers;
  let conn;
  let recorded;
  const elicitations = [];
  let answer = () => ({ action: 'decline' });

  before(async () => {
    servers = startServers();
    recorded = recordingFetch();
    conn = await connect({
      url: servers.MCP_EVERYTHING_URL,
      name: 'everything',
      fetch: recorded.fetch,
      onElicit: async (request) => {
        elicitations.push(request);
        return answer(request);
      },
    });
  });
  after(async () => {
    await conn?.close();
    servers?.stop();
  });

  test('connects, says what the server is, and lists its tools with their schemas', async () => {
    assert.equal(conn.info.serverInfo.name, 'mcp-servers/everything');
    assert.equal(conn.info.transport, 'streamable-http');
    assert.ok(['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'].includes(conn.info.protocolVersion), conn.info.protocolVersion);
    assert.ok(conn.info.capabilities.tools, 'the server declares tools');
    const tools = await conn.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ['echo', 'get-tiny-image', 'trigger-long-running-operation', 'trigger-elicitation-request']) {
      assert.ok(names.includes(name), `${name} is listed: ${names}`);
    }
    const echo = tools.find((t) => t.name === 'echo');
    assert.equal(echo.inputSchema.type, 'object');
    assert.ok(echo.inputSchema.properties.message, 'the input schema is passed through');
    const long = tools.find((t) => t.name === 'trigger-long-running-operation');
    assert.equal(long.annotations.readOnlyHint, true, 'annotations are passed through');
  });

  test('a call returns the server\'s result verbatim', async () => {
    const message = `hello ${Math.random()}`;
    const result = await conn.callTool('echo', { message });
    assert.deepEqual(result, { content: [{ type: 'text', text: `Echo: ${message}` }] });
  });

  test('an image result carries the image\'s bytes unchanged', async () => {
    const result = await conn.callTool('get-tiny-image', {});
    const image = result.content.find((c) => c.type === 'image');
    assert.ok(image, JSON.stringify(result).slice(0, 300));
    assert.equal(image.mimeType, 'image/png');
    const bytes = Buffer.from(image.data, 'base64');
    assert.deepEqual(bytes, Buffer.from(MCP_TINY_IMAGE, 'base64'));
    assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
  });

  test('a long-running tool reports its progress, step by step, then its result', async () => {
    const progress = [];
    const result = await conn.callTool('trigger-long-running-operation', { duration: 1, steps: 4 }, { onProgress: (p) => progress.push(p) });
    assert.deepEqual(progress.map((p) => [p.progress, p.total]), [[1, 4], [2, 4], [3, 4], [4, 4]]);
    assert.match(result.content[0].text, /Long running operation completed/);
  });

  test('Stop: aborting the signal cancels the call at the server and rejects with kind "cancelled"', async () => {
    const stop = new AbortController();
    const progress = [];
    const call = conn.callTool('trigger-long-running-operation', { duration: 30, steps: 30 }, {
      signal: stop.signal,
      onProgress: (p) => {
        progress.push(p);
        if (p.progress === 1) stop.abort();
      },
    });
    await assert.rejects(call, (e) => e.kind === 'cancelled' && typeof e.message === 'string');
    assert.equal(progress.length, 1, 'no progress after the cancellation');
    const request = recorded.sent.find((s) => s.rpc === 'tools/call' && s.params?.name === 'trigger-long-running-operation' && s.params?.arguments?.duration === 30);
    assert.ok(request, 'the call was sent');
    // The server accepted the cancellation of that call (202, as for every notification it takes).
    const cancelled = recorded.sent.find((s) => s.rpc === 'notifications/cancelled');
    assert.ok(cancelled, `notifications/cancelled was sent: ${recorded.sent.map((s) => s.rpc).join(', ')}`);
    await cancelled.answered;
    assert.equal(cancelled.status, 202);
    assert.ok(cancelled.params.requestId !== undefined);
    // And the connection goes on.
    assert.equal((await conn.callTool('echo', { message: 'after' })).content[0].text, 'Echo: after');
  });

  test('an elicitation is answered: what the user typed, and the schema\'s defaults for what they left', async () => {
    answer = () => ({ action: 'accept', content: { name: 'Ada Lovelace' } });
    const result = await conn.callTool('trigger-elicitation-request', {});
    const request = elicitations.at(-1);
    assert.ok(request.message, 'the request has its message');
    assert.equal(request.requestedSchema.type, 'object');
    // The server echoes what it received after "Raw result:".
    const text = result.content.map((c) => c.text).join('\n');
    const received = JSON.parse(text.slice(text.indexOf('Raw result:') + 'Raw result:'.length));
    assert.equal(received.action, 'accept');
    assert.equal(received.content.name, 'Ada Lovelace');
    // Defaults the server's schema gives (SEP-1034), which the answer did not name.
    const defaults = Object.entries(request.requestedSchema.properties).filter(([, p]) => p.default !== undefined);
    assert.ok(defaults.length > 0, 'the schema has defaults');
    for (const [key, p] of defaults) assert.deepEqual(received.content[key], p.default, `${key} has its default`);
  });

  test('an elicitation declined is told to the server as declined', async () => {
    answer = () => ({ action: 'decline' });
    const result = await conn.callTool('trigger-elicitation-request', {});
    assert.match(result.content.map((c) => c.text).join('\n'), /declined/i);
  });

  test('resources and prompts: listed, read, and a prompt filled with its arguments', async () => {
    const resources = await conn.listResources();
    assert.ok(resources.length > 0);
    const read = await conn.readResource(resources[0].uri);
    assert.equal(read.contents[0].uri, resources[0].uri);
    const prompts = await conn.listPrompts();
    const args = prompts.find((p) => p.name === 'args-prompt');
    assert.ok(args?.arguments?.some((a) => a.name === 'city'), JSON.stringify(prompts));
    const prompt = await conn.getPrompt('args-prompt', { city: 'Lyon', state: 'Rhône' });
    assert.match(JSON.stringify(prompt.messages), /Lyon/);
  });

  test('a closed connection refuses further calls with kind "closed"', async () => {
    const other = await connect({ url: servers.MCP_EVERYTHING_URL, name: 'everything' });
    await other.close();
    await assert.rejects(other.listTools(), (e) => e.kind === 'closed');
  });

  test('a server of the legacy HTTP+SSE transport (2024-11-05) is reached through the fallback', async () => {
    const legacy = await connect({ url: servers.MCP_EVERYTHING_SSE_URL, name: 'everything (SSE)' });
    try {
      assert.equal(legacy.info.transport, 'sse');
      assert.equal((await legacy.callTool('echo', { message: 'over SSE' })).content[0].text, 'Echo: over SSE');
    } finally {
      await legacy.close();
    }
  });

  test('the headers given (a bearer token) go with every request, over either transport', async () => {
    for (const url of [servers.MCP_EVERYTHING_URL, servers.MCP_EVERYTHING_SSE_URL]) {
      const { fetch, sent } = recordingFetch();
      const conn = await connect({ url, name: 'with a token', fetch, headers: { Authorization: 'Bearer test-token-1' } });
      await conn.callTool('echo', { message: 'with a token' });
      await conn.close();
      assert.ok(sent.length >= 2, `${url}: ${sent.length} requests`);
      for (const s of sent) assert.equal(s.headers.get('authorization'), 'Bearer test-token-1', `${s.method} ${s.url} ${s.rpc ?? ''}`);
    }
  });
});

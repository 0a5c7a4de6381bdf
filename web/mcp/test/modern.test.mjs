// The current protocol revision, 2026-07-28 (stateless Streamable HTTP): against a server of the official
// SDK's v2 server package that speaks it (tests/mcp), Cowork's client negotiates it, lists and calls; the
// same client against a 2025 server (server-everything, in everything.test.mjs) falls back by itself.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connect } from '../index.mjs';
import { ROOT } from '../support/servers.mjs';

const { McpServer, acceptedContent, createMcpHandler, inputRequired } = await import(join(ROOT, 'tests/mcp/node_modules/@modelcontextprotocol/server/dist/index.mjs'));

// The SDK's handler is a web-standard fetch handler: served here from node:http.
function serve(handler) {
  return createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && chunks.length > 0;
    const response = await handler.fetch(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) for await (const chunk of response.body) res.write(chunk);
    res.end();
  });
}

describe('protocol revision 2026-07-28', { timeout: 60_000 }, () => {
  let http;
  let url;
  const calls = [];

  before(async () => {
    const handler = createMcpHandler(() => {
      const server = new McpServer({ name: 'modern', version: '1.0.0' });
      server.registerTool('today', { description: 'Says which revision served the call', annotations: { readOnlyHint: true } }, async () => {
        calls.push('today');
        return { content: [{ type: 'text', text: 'served statelessly' }], structuredContent: { ok: true } };
      });
      // An elicitation the 2026-07-28 way: the call answers "input required", the client asks the user and
      // calls again with the answer.
      server.registerTool('greet', { description: 'Asks the user for a name' }, async (ctx) => {
        const answer = acceptedContent(ctx.mcpReq.inputResponses, 'who');
        if (!answer) {
          const requestedSchema = { type: 'object', properties: { name: { type: 'string' }, title: { type: 'string', default: 'Dr' } }, required: ['name'] };
          return inputRequired({ inputRequests: { who: inputRequired.elicit({ message: 'Who are you?', requestedSchema }) } });
        }
        return { content: [{ type: 'text', text: `hello ${answer.title} ${answer.name}` }] };
      });
      return server;
    });
    http = serve(handler);
    await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${http.address().port}/mcp`;
  });
  after(() => {
    http?.closeAllConnections();
    http?.close();
  });

  test('is negotiated with a server that speaks it; tools are listed and called, results verbatim', async () => {
    const conn = await connect({ url, name: 'modern' });
    try {
      assert.equal(conn.info.protocolVersion, '2026-07-28');
      assert.equal(conn.info.serverInfo.name, 'modern');
      const tools = await conn.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['greet', 'today']);
      assert.equal(tools.find((t) => t.name === 'today').annotations.readOnlyHint, true);
      const result = await conn.callTool('today', {});
      assert.deepEqual(result.content, [{ type: 'text', text: 'served statelessly' }]);
      assert.deepEqual(result.structuredContent, { ok: true });
      assert.deepEqual(calls, ['today']);
    } finally {
      await conn.close();
    }
  });

  test('an elicitation (input required, then the call again) is answered through onElicit, defaults applied', async () => {
    const asked = [];
    const onElicit = async (request) => {
      asked.push(request);
      return { action: 'accept', content: { name: 'Ada' } };
    };
    const conn = await connect({ url, name: 'modern', onElicit });
    try {
      const result = await conn.callTool('greet', {});
      assert.equal(asked.length, 1);
      assert.equal(asked[0].message, 'Who are you?');
      assert.deepEqual(result.content, [{ type: 'text', text: 'hello Dr Ada' }]);
    } finally {
      await conn.close();
    }
  });
});

// Sampling (a server asking the client's model for a completion) is refused unless the user allowed it
// for that server: the server gets an error that names the setting. Against a small server of this test
// made with the official SDK (tests/mcp), since the reference servers ask only clients that declare
// sampling — which Cowork does only when allowed.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connect } from '../index.mjs';
import { ROOT } from '../support/servers.mjs';

const SDK = join(ROOT, 'tests/mcp/node_modules/@modelcontextprotocol/sdk/dist/esm');
const { McpServer } = await import(join(SDK, 'server/mcp.js'));
const { StreamableHTTPServerTransport } = await import(join(SDK, 'server/streamableHttp.js'));
const { CreateMessageResultSchema } = await import(join(SDK, 'types.js'));

// A server (one session per connection: the client's answer comes in a request of its own) with one tool, `ask-model`, that sends sampling/createMessage to the client (whatever
// it declared) and answers with what came back, or with the error.
function samplingServer() {
  const mcp = () => {
    const server = new McpServer({ name: 'sampler', version: '1.0.0' });
    server.registerTool('ask-model', { description: 'Asks the client\'s model' }, async () => {
      try {
        const answer = await server.server.request(
          { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }], maxTokens: 10 } },
          CreateMessageResultSchema,
        );
        return { content: [{ type: 'text', text: `model said: ${answer.content.text}` }] };
      } catch (error) {
        return { content: [{ type: 'text', text: `refused: ${error.message}` }], isError: true };
      }
    });
    return server;
  };
  const sessions = new Map();
  return createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    let transport = sessions.get(req.headers['mcp-session-id']);
    if (!transport) {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => sessions.set(id, transport) });
      await mcp().connect(transport);
    }
    await transport.handleRequest(req, res, body ? JSON.parse(body) : undefined);
  });
}

describe('sampling', { timeout: 60_000 }, () => {
  let http;
  let url;

  before(async () => {
    http = samplingServer();
    await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${http.address().port}/mcp`;
  });
  after(() => {
    http?.closeAllConnections();
    http?.close();
  });

  test('not allowed: the server is refused with an error naming the setting, and the call goes on', async () => {
    const conn = await connect({ url, name: 'Sampler' });
    try {
      const result = await conn.callTool('ask-model', {});
      assert.equal(result.isError, true);
      assert.match(result.content[0].text, /refused: .*sampling is off for the server "Sampler"/);
      assert.match(result.content[0].text, /Settings → Tools, "Allow sampling"/);
    } finally {
      await conn.close();
    }
  });

  test('allowed: the request goes to onSample and its answer back to the server', async () => {
    const asked = [];
    const onSample = async (request) => {
      asked.push(request);
      return { role: 'assistant', content: { type: 'text', text: 'hi from Cowork' }, model: 'demo' };
    };
    const conn = await connect({ url, name: 'Sampler', allowSampling: true, onSample });
    try {
      const result = await conn.callTool('ask-model', {});
      assert.equal(result.content[0].text, 'model said: hi from Cowork');
      assert.equal(asked[0].messages[0].content.text, 'Say hi');
    } finally {
      await conn.close();
    }
  });
});

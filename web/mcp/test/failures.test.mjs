// What the MCP client says when a server cannot be used: nothing listening, a URL that is not an MCP
// endpoint, and a server that dies in the middle of a call (the call fails, nothing waits for ever).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { connect } from '../index.mjs';
import { closedPort, startEverything } from '../support/servers.mjs';

describe('failures', { timeout: 120_000 }, () => {
  const children = [];
  after(() => children.forEach((c) => c.kill('SIGKILL')));

  test('nothing listening → kind "unreachable", naming the address and the bridge recipe', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    await assert.rejects(connect({ url, name: 'nowhere' }), (e) => {
      assert.equal(e.kind, 'unreachable');
      assert.ok(e.message.includes(url), e.message);
      assert.match(e.message, /supergateway or mcp-proxy/);
      return true;
    });
  });

  test('not a URL → kind "unreachable", saying so', async () => {
    await assert.rejects(connect({ url: 'mcp.example', name: 'typo' }), (e) => e.kind === 'unreachable' && /not an http\(s\) URL/.test(e.message));
  });

  test('an address that is not an MCP endpoint → kind "http" with its status, after trying both transports', async () => {
    const { url, child } = await startEverything();
    children.push(child);
    const wrong = url.replace(/\/mcp$/, '/nothing-here');
    await assert.rejects(connect({ url: wrong, name: 'wrong path' }), (e) => {
      assert.equal(e.kind, 'http');
      assert.equal(e.status, 404);
      assert.match(e.message, /legacy HTTP\+SSE transport failed too/);
      return true;
    });
  });

  test('a server that dies mid-call: the call fails (not "cancelled"), and the next connection to a live one works', async () => {
    const { url, child } = await startEverything();
    children.push(child);
    const conn = await connect({ url, name: 'mortal' });
    let died;
    const call = conn.callTool('trigger-long-running-operation', { duration: 60, steps: 60 }, {
      onProgress: () => {
        if (!died) died = new Promise((resolve) => child.once('exit', resolve)).then(() => undefined, () => undefined);
        child.kill('SIGKILL');
      },
    });
    await assert.rejects(call, (e) => {
      assert.equal(e.kind, 'unreachable', JSON.stringify(e));
      assert.match(e.message, /stopped answering in the middle of the request/);
      return true;
    });
    await died;
    await conn.close();
    const { url: again, child: second } = await startEverything();
    children.push(second);
    const next = await connect({ url: again, name: 'alive' });
    assert.equal((await next.callTool('echo', { message: 'next' })).content[0].text, 'Echo: next');
    await next.close();
  });
});

// The page's MCP host (host.mjs) against real servers on loopback: a workspace's servers offer their
// tools as page tools (named, with their schemas and approval), a call returns the server's result
// verbatim, progress reaches the caller, abort() cancels at the server, an elicitation is answered, a
// server that dies mid-call fails the call with a clear message and the next call connects again.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { abort, call, configure, offer } from '../index.mjs';
import { closedPort, recordingFetch, startEverything, startServers } from '../support/servers.mjs';

describe('the page\'s MCP host', { timeout: 120_000 }, () => {
  let servers;
  let recorded;
  const progress = [];
  let elicit = async () => ({ action: 'decline' });
  const everything = () => ({ id: 'srv-everything', name: 'everything', url: servers.MCP_EVERYTHING_URL, auth: 'none', enabled: true, policy: 'ask_unless_read_only', tools: [{ tool: 'get-sum', policy: 'always_ask' }] });

  before(() => {
    servers = startServers();
    recorded = recordingFetch();
    configure({ fetch: recorded.fetch, onProgress: (callId, p) => progress.push([callId, p.text]), onElicit: (...a) => elicit(...a) });
  });
  after(() => {
    configure();
    servers?.stop();
  });

  test('offer: the enabled servers\' tools as page tools, named by server, approval by policy', async () => {
    const nowhere = { id: 'srv-gone', name: 'gone', url: `http://127.0.0.1:${await closedPort()}/mcp`, enabled: true };
    const off = { ...everything(), id: 'srv-off', name: 'off', enabled: false };
    const specs = await offer(JSON.stringify([nowhere, everything(), off]));
    const byName = Object.fromEntries(specs.map((s) => [s.name, s]));
    assert.ok(!specs.some((s) => s.name.startsWith('gone__') || s.name.startsWith('off__')), 'an unreachable or disabled server offers none');
    const echo = byName.everything__echo;
    assert.deepEqual(echo.mcp, { server: 'everything', tool: 'echo' });
    assert.equal(echo.parameters.type, 'object');
    assert.ok(echo.parameters.properties.message, 'the schema passes through');
    assert.match(echo.description, /\S/);
    assert.equal(echo.approval, 'auto', 'echo says it only reads');
    assert.equal(byName['everything__get-sum'].approval, 'ask_every_time', 'its own policy');
    assert.equal(byName['everything__trigger-long-running-operation'].approval, 'auto');
  });

  test('call: the server\'s CallToolResult verbatim; a connection kept between calls', async () => {
    const before = recorded.sent.filter((s) => s.rpc === 'initialize').length;
    const answer = await call('everything__echo', '{"message": "from the host"}', 'call-1');
    assert.deepEqual(answer, { content: '', success: true, result: { content: [{ type: 'text', text: 'Echo: from the host' }] } });
    await call('everything__echo', '{"message": "again"}', 'call-2');
    assert.equal(recorded.sent.filter((s) => s.rpc === 'initialize').length, before, 'no new connection');
  });

  test('a tool not offered, or arguments that are not JSON: a failed call saying so', async () => {
    const unknown = await call('everything__nothing', '{}', 'call-3');
    assert.equal(unknown.success, false);
    assert.match(unknown.content, /everything__nothing is not a tool/);
    const broken = await call('everything__echo', '{"message": ', 'call-4');
    assert.equal(broken.success, false);
    assert.match(broken.content, /not valid JSON/);
  });

  test('progress goes to the call\'s card; abort() cancels the call at the server', async () => {
    progress.length = 0;
    const running = call('everything__trigger-long-running-operation', '{"duration": 30, "steps": 30}', 'call-long');
    while (progress.length === 0) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(progress[0], ['call-long', 'Progress 1 of 30']);
    abort();
    const answer = await running;
    assert.equal(answer.success, false);
    assert.equal(answer.content, 'The call to trigger-long-running-operation on everything was stopped by the user.');
    const cancelled = recorded.sent.find((s) => s.rpc === 'notifications/cancelled');
    assert.ok(cancelled, 'notifications/cancelled was sent');
    await cancelled.answered;
    assert.equal(cancelled.status, 202, 'and the server took it');
    assert.equal((await call('everything__echo', '{"message": "after"}', 'call-5')).success, true);
  });

  test('an elicitation is answered by the form\'s handler, naming the server', async () => {
    const asked = [];
    elicit = async (server, params) => {
      asked.push([server, params.message]);
      return { action: 'accept', content: { name: 'Grace Hopper' } };
    };
    const answer = await call('everything__trigger-elicitation-request', '{}', 'call-6');
    assert.equal(asked.length, 1);
    assert.equal(asked[0][0], 'everything');
    assert.match(JSON.stringify(answer.result), /Grace Hopper/);
  });

  test('a server that dies mid-call: the call fails naming it and why; the next call connects again', async () => {
    const mortal = await startEverything();
    const port = new URL(mortal.url).port;
    const server = { id: 'srv-mortal', name: 'mortal', url: mortal.url, enabled: true, policy: 'never_ask' };
    assert.ok((await offer([server])).some((s) => s.name === 'mortal__echo'));
    progress.length = 0;
    const running = call('mortal__trigger-long-running-operation', '{"duration": 60, "steps": 60}', 'call-7');
    while (progress.length === 0) await new Promise((r) => setTimeout(r, 50));
    const exited = new Promise((resolve) => mortal.child.once('exit', resolve));
    mortal.child.kill('SIGKILL');
    await exited;
    const answer = await running;
    assert.equal(answer.success, false);
    assert.match(answer.content, /^Error from the MCP server mortal: The server stopped answering in the middle of the request/);
    const again = await startEverything(port);
    try {
      const next = await call('mortal__echo', '{"message": "back"}', 'call-8');
      assert.equal(next.result?.content?.[0]?.text, 'Echo: back', JSON.stringify(next));
    } finally {
      again.child.kill('SIGKILL');
    }
  });
});

// OAuth from the client's side, against a server that requires it (tests/mcp/oauth-server.mjs, made of
// the official SDK's authorization-server parts): the sign-in goes through the worker's `redirect`
// callback once, everything the sign-in leaves (tokens, the registration, the PKCE verifier) goes
// through `save` and nowhere else, an expired token is refreshed without asking the user again, and a
// sign-in that does not finish (the popup closed, a callback not for this request) is "unauthorized".
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connect } from '../index.mjs';
import { startServers } from '../support/servers.mjs';

// The worker's side of `oauth`, recording what it is asked: a store in memory and a "popup" that follows
// the authorization URL (the server approves at once) to the callback.
function worker({ tamper } = {}) {
  const kept = new Map();
  const asked = [];
  const saved = [];
  return {
    kept,
    asked,
    saved,
    oauth: {
      redirectUrl: 'http://127.0.0.1:1/oauth/callback',
      clientMetadataUrl: 'http://127.0.0.1:1/client.json', // http: not usable as a client id, so DCR
      clientName: 'Cowork test',
      load: async (key) => kept.get(key),
      save: async (key, value) => {
        saved.push(key);
        if (value === undefined) kept.delete(key);
        else kept.set(key, structuredClone(value));
      },
      redirect: async (url) => {
        asked.push(url);
        const response = await fetch(url, { redirect: 'manual' });
        const callback = new URL(response.headers.get('location'));
        return tamper ? tamper(callback) : callback.href;
      },
    },
  };
}

describe('OAuth', { timeout: 120_000 }, () => {
  let servers;
  const stats = async () => (await fetch(`${servers.MCP_OAUTH_ADMIN}/stats`)).json();

  before(() => {
    servers = startServers();
  });
  after(() => servers?.stop());

  test('without a sign-in the server is kind "unauthorized"', async () => {
    await assert.rejects(connect({ url: servers.MCP_OAUTH_URL, name: 'locked' }), (e) => e.kind === 'unauthorized' && e.status === 401);
  });

  test('signs in once through the worker\'s redirect, keeps what it got only through save, refreshes an expired token', async () => {
    const w = worker();
    const conn = await connect({ url: servers.MCP_OAUTH_URL, name: 'oauth', oauth: w.oauth });
    assert.equal(w.asked.length, 1, 'one sign-in');
    const authorization = new URL(w.asked[0]);
    assert.equal(authorization.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(authorization.searchParams.get('resource'), servers.MCP_OAUTH_URL, 'the resource indicator (RFC 8707)');
    assert.ok(authorization.searchParams.get('state'), 'a state to check the callback against');
    assert.deepEqual([...w.kept.keys()].sort(), ['client', 'discovery', 'tokens', 'verifier']);
    const client = w.kept.get('client').client_id;
    const first = w.kept.get('tokens').access_token;
    assert.match((await conn.callTool('whoami', {})).content[0].text, new RegExp(`signed in as client ${client}`));

    // Expired four times (more than the connection's limit of failed sign-ins in a row): refreshed each time.
    const before = await stats();
    for (let i = 0; i < 4; i++) {
      await fetch(`${servers.MCP_OAUTH_ADMIN}/expire`, { method: 'POST' });
      assert.match((await conn.callTool('whoami', {})).content[0].text, new RegExp(client));
    }
    const afterwards = await stats();
    assert.equal(afterwards.refreshes, before.refreshes + 4, 'the token was refreshed each time');
    assert.equal(w.asked.length, 1, 'without asking the user to sign in again');
    assert.notEqual(w.kept.get('tokens').access_token, first, 'the new token is kept');
    assert.ok(!JSON.stringify(conn.info).includes(first), 'no token in what the connection tells');
    await conn.close();
  });

  test('signed out (the worker forgot what it kept): the next connection asks to sign in again', async () => {
    const w = worker();
    await (await connect({ url: servers.MCP_OAUTH_URL, name: 'oauth', oauth: w.oauth })).close();
    w.kept.clear();
    const conn = await connect({ url: servers.MCP_OAUTH_URL, name: 'oauth', oauth: w.oauth });
    assert.equal(w.asked.length, 2);
    await conn.close();
  });

  test('a sign-in the user gave up (the popup closed) → kind "unauthorized", saying so', async () => {
    const w = worker();
    w.oauth.redirect = async () => {
      throw new Error('the sign-in window was closed');
    };
    await assert.rejects(connect({ url: servers.MCP_OAUTH_URL, name: 'oauth', oauth: w.oauth }), (e) => {
      assert.equal(e.kind, 'unauthorized');
      assert.match(e.message, /sign-in window was closed/);
      return true;
    });
    assert.equal(w.kept.has('tokens'), false);
  });

  test('a callback whose state is not the one sent is refused: no code is exchanged', async () => {
    const before = await stats();
    const w = worker({
      tamper: (callback) => {
        callback.searchParams.set('state', 'forged');
        return callback.href;
      },
    });
    await assert.rejects(connect({ url: servers.MCP_OAUTH_URL, name: 'oauth', oauth: w.oauth }), (e) => e.kind === 'unauthorized' && /state/.test(e.message));
    assert.equal((await stats()).codes, before.codes, 'no code was exchanged');
    assert.equal(w.kept.has('tokens'), false);
  });
});

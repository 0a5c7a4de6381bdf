// The page's MCP screens, their logic without a browser: Settings → Tools' list (ui-tools.mjs; every
// server-given text escaped, each tool's policy shown, servers gathered across workspaces, the Add
// form's checks) and the composer's menus (ui-menus.mjs; a resource read as the file to attach, a
// prompt as the text to insert, `/` commands, and the catalog of real servers on loopback).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { addForm, gather, newServer, render, setPolicy } from '../ui-tools.mjs';
import { catalog, commandOf, matching, promptText, resourceFile } from '../ui-menus.mjs';
import { closedPort, startServers } from '../support/servers.mjs';

const server = (name) => ({ id: 'mcp-1', name, url: 'http://127.0.0.1:9/mcp', auth: 'none', enabled: true, policy: 'ask_unless_read_only', tools: [] });

describe('Settings → Tools', () => {
  test('what a server says is shown as text, never as markup', () => {
    // A server names its tools and describes them: hostile text must not become elements or attributes.
    const evil = `"><img src=x onerror=alert(1)><script>alert(2)</script>'`;
    const s = server(evil);
    setPolicy(s, 'write_file', 'never_ask');
    const status = {
      server_id: 'mcp-1',
      state: 'connected',
      message: evil,
      tools: [
        { name: evil, description: evil, read_only: true },
        { name: 'write_file', description: 'Writes', read_only: false },
      ],
      resources: [{ name: evil, description: '', read_only: false }],
      prompts: [],
    };
    const html = render([{ server: s, used: [evil] }], [status]);
    for (const raw of ['<img', '<script', '"><img', "'"]) assert.ok(!html.includes(raw), `${raw} reached the markup: ${html}`);
    assert.ok(html.includes('&lt;script&gt;alert(2)&lt;/script&gt;'), html);
    assert.ok(html.includes('class="mcp-status connected"'), html);
    // The read-only tool is marked; each tool's select shows its policy (the server's unless its own).
    assert.ok(html.includes('</code> (read-only)'), html);
    const selected = [...html.matchAll(/<option value="(\w+)" selected>/g)].map((m) => m[1]);
    assert.deepEqual(selected, ['ask_unless_read_only', 'never_ask'], "the server's policy, then write_file's own");
  });

  test('the status is named by its state, and a server not heard from yet says it is connecting', () => {
    const html = render([{ server: server('files'), used: ['default'] }], []);
    assert.ok(html.includes('class="mcp-status unknown" role="status">Connecting…</p>'), html);
    assert.ok(html.includes('used by default'), html);
    const oauth = { ...server('secure'), auth: 'oauth' };
    const needs = render([{ server: oauth, used: ['w'] }], [{ server_id: 'mcp-1', state: 'needs_sign_in', message: 'Sign in' }]);
    assert.ok(needs.includes('class="mcp-status needs-sign-in"'), needs);
    assert.match(needs, /data-act="sign-in" data-id="mcp-1">Sign in</);
    const signed = render([{ server: oauth, used: ['w'] }], [{ server_id: 'mcp-1', state: 'connected', message: 'ok' }]);
    assert.match(signed, /data-act="sign-out" data-id="mcp-1">Sign out</);
    assert.doesNotMatch(render([{ server: server('plain'), used: ['w'] }], [{ server_id: 'mcp-1', state: 'connected' }]), /sign-(in|out)/);
    // A server switched off is shown so.
    assert.doesNotMatch(render([{ server: { ...server('off'), enabled: false }, used: ['w'] }], []), / checked>/);
  });

  test('a server kept by several workspaces is listed once, used by each', () => {
    const a = server('a');
    const b = { ...server('b'), id: 'mcp-2' };
    const found = gather([['work', [a, b]], ['home', [{ ...a }]]]);
    assert.deepEqual(found.map((f) => [f.server.name, f.used]), [['a', ['work', 'home']], ['b', ['work']]]);
  });

  test('the Add form needs a name and an http(s) URL, and says how the server is signed in to', () => {
    for (const fields of [{ name: '', url: 'http://x/mcp' }, { name: 'x', url: 'ftp://x' }, { name: 'x', url: 'x/mcp' }]) {
      assert.match(newServer(fields, 'id').error, /name and its http/);
    }
    assert.equal(newServer({ name: 'n', url: 'https://x/mcp', token: '' }, 'id').server.auth, 'none');
    const bearer = newServer({ name: 'n', url: 'https://x/mcp', token: 't' }, 'id');
    assert.deepEqual([bearer.server.auth, bearer.token], ['bearer', 't']);
    assert.ok(!JSON.stringify(bearer.server).includes('"t"'), 'the token is not in the configuration the workspace keeps');
    const oauth = newServer({ name: 'n', url: 'https://x/mcp', token: 't', oauth: true }, 'id');
    assert.deepEqual([oauth.server.auth, oauth.token], ['oauth', ''], 'OAuth keeps no bearer token');
    // The workspace list names the current one, escaped.
    const form = addForm(['<w>', 'default'], 'default');
    assert.ok(form.includes('<option>&lt;w&gt;</option><option selected>default</option>'), form);
  });
});

describe('the composer', () => {
  test('a text resource becomes its UTF-8 bytes and a blob its decoded bytes', () => {
    const text = { contents: [{ uri: 'demo://a', mimeType: 'text/markdown', text: '# Héllo' }] };
    assert.deepEqual(resourceFile('demo://a', text), { mime: 'text/markdown', bytes: new TextEncoder().encode('# Héllo') });
    assert.equal(resourceFile('demo://a', { contents: [{ uri: 'demo://a', text: 'x' }] }).mime, 'text/plain');
    const blob = {
      contents: [
        { uri: 'demo://other', text: 'not this one' },
        { uri: 'demo://b', mimeType: 'application/octet-stream', blob: 'AAEC/w==' },
      ],
    };
    assert.deepEqual(resourceFile('demo://b', blob), { mime: 'application/octet-stream', bytes: Uint8Array.from([0, 1, 2, 255]) });
  });

  test('a read without usable contents says what is wrong', () => {
    assert.throws(() => resourceFile('demo://x', { contents: [] }), /no contents for demo:\/\/x/);
    assert.throws(() => resourceFile('demo://x', { contents: [{ uri: 'demo://x', blob: '%%%' }] }), /not base64/);
    assert.throws(() => resourceFile('demo://x', { contents: [{ uri: 'demo://x' }] }), /neither text nor a blob/);
  });

  test('a prompt inserts its user text and counts what it leaves out', () => {
    const result = {
      messages: [
        { role: 'user', content: { type: 'text', text: 'First' } },
        { role: 'assistant', content: { type: 'text', text: 'Not inserted' } },
        { role: 'user', content: { type: 'resource', resource: { uri: 'demo://r', text: 'Embedded' } } },
        { role: 'user', content: { type: 'image', data: 'AAAA', mimeType: 'image/png' } },
        { role: 'user', content: [{ type: 'text', text: 'Last' }] },
      ],
    };
    assert.deepEqual(promptText(result), { text: 'First\n\nEmbedded\n\nLast', leftOut: 2 });
    assert.deepEqual(promptText({}), { text: '', leftOut: 0 });
  });

  test('/ and one word at the start of the box is a command; the prompts it picks', () => {
    assert.equal(commandOf('/'), '');
    assert.equal(commandOf('/Simple'), 'simple');
    for (const text of ['hello /x', '/two words', '/x\n', '']) assert.equal(commandOf(text), null, text);
    const prompts = [
      { id: 'simple-prompt', name: 'Simple Prompt' },
      { id: 'args-prompt', name: 'Arguments Prompt' },
    ];
    assert.deepEqual(matching(prompts, 'simple').map((p) => p.id), ['simple-prompt']);
    assert.deepEqual(matching(prompts, 'arguments').map((p) => p.id), ['args-prompt'], 'by title too');
    assert.equal(matching(prompts, '').length, 2);
  });
});

describe("the composer's catalog of real servers", { timeout: 120_000 }, () => {
  let servers;
  before(() => (servers = startServers()));
  after(() => servers?.stop());

  test("server-everything's resources and prompts, a switched-off server skipped, a dead one named", async () => {
    const everything = { ...server('everything'), url: servers.MCP_EVERYTHING_URL };
    const off = { ...server('off'), id: 'mcp-off', url: `http://127.0.0.1:${await closedPort()}/mcp`, enabled: false };
    const gone = { ...server('gone'), id: 'mcp-gone', url: `http://127.0.0.1:${await closedPort()}/mcp` };
    const found = await catalog([everything, off, gone]);
    const doc = found.resources.find((r) => r.name === 'features.md');
    assert.ok(doc, `features.md is listed: ${found.resources.map((r) => r.name)}`);
    assert.equal(doc.server.id, 'mcp-1', 'each item keeps its server');
    assert.match(doc.id, /features\.md$/);
    const withArgs = found.prompts.find((p) => p.arguments.some((a) => a.name === 'city'));
    assert.ok(withArgs, 'a prompt with arguments lists them');
    assert.equal(withArgs.arguments.find((a) => a.name === 'city').required, true);
    assert.equal(found.problems.length, 1, found.problems.join('\n'));
    assert.match(found.problems[0], /^gone: Nothing answered at/);
  });
});

// The embedding API (spec §10) as another page uses it: the example page (plain HTML + JS importing
// only dist/embed/cowork.js) with its own tools, the API's answers and errors, the UI mounted into a
// host page with hostile CSS, and the TypeScript declarations checked by `tsc` against a file that
// uses every export.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useServerAndBrowser, launchBrowser, openPage, DIST } from '../harness.js';
import { startEverything } from '../../../web/mcp/support/servers.mjs';

const app = useServerAndBrowser();
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
// Screenshots for a person to look at (like screens.test.js).
const SHOTS = join(root, 'tests/e2e/screenshots');
mkdirSync(SHOTS, { recursive: true });

async function openExample() {
  const page = await openPage(app.browser.context, new URL('/examples/embed/', app.server.url).href);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 30_000 });
  return page;
}

async function sendInExample(page, text) {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('#send:disabled').waitFor({ state: 'detached', timeout: 20_000 });
}

test('the example page: the model calls the page’s write_file, the archive keeps it, recall finds it, a reload resumes it', async () => {
  const page = await openExample();
  assert.match(await page.locator('#status').innerText(), /archive in this browser \(OPFS\)/);

  await sendInExample(page, 'write file notes/todo.md: buy milk');
  // The tool ran in the page: its file system has the file, and the result is a turn of the session.
  const result = page.locator('#log li[data-role="tool"]', { hasText: 'write_file' });
  await result.waitFor();
  assert.match(await result.innerText(), /wrote 8 characters to notes\/todo\.md/);
  assert.match(await page.locator('#files').innerText(), /notes\/todo\.md \(8 characters\)/);
  await page.locator('#log li[data-role="assistant"]', { hasText: 'Here is what write_file returned' }).waitFor();
  // The state register names the file.
  assert.match(await page.locator('#state').innerText(), /write notes\/todo\.md \(turn 3\)/);

  // The model reads it back through the other tool.
  await sendInExample(page, 'read file notes/todo.md');
  await page.locator('#log li[data-role="tool"]', { hasText: '← read_file: buy milk' }).waitFor();

  // conversation_recall with tool_calls finds the call, with its arguments.
  await page.getByRole('button', { name: 'Find its calls' }).click();
  await page.locator('#recall').filter({ hasText: 'notes/todo.md' }).waitFor();
  const recall = await page.locator('#recall').innerText();
  assert.match(recall, /write_file/);
  assert.match(recall, /buy milk/);

  // Context assembly sees every turn in the window.
  await page.getByRole('button', { name: 'Assemble' }).click();
  await page.locator('#context').filter({ hasText: 'in the window' }).waitFor();
  assert.match(await page.locator('#context').innerText(), /turns 1, 2, 3, 4, 5, 6, 7, 8 in the window, 0 only in the archive/);

  await page.screenshot({ path: join(SHOTS, 'embed-example.png'), fullPage: true });

  // Reload: the page resumes the session from the archive, with the tool's call, result and state.
  await page.reload();
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 30_000 });
  assert.equal(await page.locator('#log li').count(), 8);
  const call = await page.locator('#log li[data-turn="2"]').innerText();
  assert.match(call, /→ write_file \{/);
  assert.match(call, /"path":"notes\/todo.md"/);
  assert.match(call, /"content":"buy milk"/);
  assert.match(await page.locator('#log li[data-turn="3"]').innerText(), /← write_file: wrote 8 characters to notes\/todo\.md/);
  assert.match(await page.locator('#state').innerText(), /read notes\/todo\.md \(turn 7\)/);
  assert.match(await page.locator('#files').innerText(), /notes\/todo\.md/);

  // The full UI mounted from the archive offers the page's tools in its own chats too.
  await page.getByRole('button', { name: 'Show the full Cowork UI' }).click();
  const ui = page.locator('#ui');
  await ui.locator('.session-row', { hasText: 'write file notes/todo.md' }).click();
  await ui.locator('.turn[data-turn="8"]').waitFor({ timeout: 30_000 });
  const box = ui.getByLabel('Message', { exact: true });
  await box.fill('write file notes/from-ui.md: written from the mounted UI');
  await box.press('Enter');
  await ui.locator('.turn[data-role="assistant"]', { hasText: 'Here is what write_file returned' }).nth(1).waitFor({ timeout: 20_000 });
  assert.match(await page.locator('#files').innerText(), /notes\/from-ui\.md \(27 characters\)/);
  await page.getByRole('button', { name: 'Show the full Cowork UI' }).click();
  await ui.waitFor({ state: 'hidden' });

  // The same archive is the Cowork app's: the session is listed there too, under its workspace.
  const cowork = await openPage(app.browser.context, app.server.url);
  await cowork.locator('.session-row', { hasText: 'write file notes/todo.md' }).waitFor({ timeout: 30_000 });
  await cowork.close();
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the API: sessions, turns, search, recall and context on a memory archive; errors are Error objects', async () => {
  const page = await openExample();
  const out = await page.evaluate(async () => {
    const { default: init, openArchive } = await import('/embed/cowork.js');
    await init();
    const err = async (f) => {
      try {
        await f();
        return 'no error';
      } catch (e) {
        return `${e instanceof Error ? 'Error' : typeof e}[${e.kind}]: ${e.message}`;
      }
    };
    const a = await openArchive({ storage: 'memory' });
    const r = { storage: a.storage, empty: (await a.listSessions()).length };
    const s = await a.createSession({ workspace: 'api', title: 'API check' });
    const seen = [];
    const off = a.on('turn', ({ turn }) => seen.push(turn.turn_number));
    await a.appendTurn(s.id, { role: 'user', content: 'We chose PostgreSQL for the ledger \u{d800} and \u{0} too.' });
    await a.appendTurn(s.id, { role: 'assistant', content: 'Noted: PostgreSQL.' });
    off();
    await a.appendTurn(s.id, { role: 'user', content: 'after off' });
    r.seen = seen;
    const turns = await a.readTurns(s.id, { offset: 0, limit: 10 });
    r.turns = turns.map((t) => `${t.turn_number}:${t.role}:${t.content}`);
    r.hits = (await a.search('postgresql', { session_id: s.id })).map((h) => h.turn_number);
    r.weird = (await a.search('NEAR("ledger *" \u{1F600}')).length >= 0;
    r.recall = await a.recall(s.id, { action: 'search', query: 'ledger' });
    r.badRecall = await a.recall(s.id, { action: 'find' });
    const fork = await a.forkSession(s.id, 1);
    r.fork = [fork.parent_session_id === s.id, fork.turn_count];
    const ctx = await a.assembleContext(s.id);
    r.context = [ctx.messages[0].role, ctx.manifest.turn_numbers, ctx.tools.map((t) => t.function.name)];
    r.resumed = (await a.resume(s.id, { last_turns: 2 })).turns.map((t) => t.turn_number);
    r.count = (await a.getSession(s.id)).turn_count;
    // Turns written directly feed the state register like the agent loop's.
    const direct = await a.createSession({ workspace: 'api' });
    await a.appendTurn(direct.id, { role: 'user', content: 'Fix the login form. Never use an ORM.' });
    await a.appendTurn(direct.id, {
      role: 'assistant',
      tool_calls: [{ id: 'c1', name: 'edit_file', arguments: '{"path":"src/login.ts"}' }],
    });
    await a.appendTurn(direct.id, { role: 'tool', tool_call_id: 'c1', tool_name: 'edit_file', content: 'ok' });
    const state = (await a.getSession(direct.id)).state;
    r.direct = [state.current_focus, state.key_decisions.length, state.files_touched.map((f) => `${f.action} ${f.path}`)];
    // A tool that throws fails the call with its message; a tool may use the archive while it runs (here
    // it counts the turns), but not ask for another reply.
    a.registerTool({ name: 'write_file', handler: () => { throw new Error('disk is read-only'); } });
    a.registerTool({ name: 'read_file', handler: async () => (await a.stats()).turns });
    r.tools = a.listTools();
    const t = await a.createSession({ workspace: 'api' });
    await a.send(t.id, 'write file x.txt: hi');
    await a.send(t.id, 'read file x.txt');
    a.unregisterTool('write_file');
    a.registerTool({ name: 'write_file', handler: async () => { await a.send(t.id, 'nested'); return 'sent'; } });
    await a.send(t.id, 'write file y.txt: hi');
    r.toolTurns = (await a.readTurns(t.id)).filter((x) => x.role === 'tool').map((x) => x.content);
    r.unregistered = [a.unregisterTool('read_file'), a.unregisterTool('read_file')];
    r.errors = [
      await err(() => openArchive({ storage: 'tape' })),
      await err(() => openArchive({ storge: 'memory' })),
      await err(() => a.getSession('no-such-session')),
      await err(() => a.send(s.id, '   ')),
      await err(() => a.readTurns(s.id, { limit: 0 })),
      await err(() => a.appendTurn(s.id, { role: 'narrator', content: 'x' })),
      await err(() => a.send(s.id, 'hello', { model: { base_url: 'ftp://nowhere' } })),
      await err(() => a.registerTool({ name: 'has space', handler() {} })),
      await err(() => a.registerTool({ name: 'conversation_recall', handler() {} })),
      await err(() => a.registerTool({ name: 'no_handler' })),
      await err(() => a.on('nonsense', () => {})),
    ];
    a.close();
    r.closed = await err(() => a.listSessions());
    return r;
  });
  assert.equal(out.storage, 'memory');
  assert.equal(out.empty, 0, 'a memory archive starts empty, apart from the OPFS one');
  assert.deepEqual(out.seen, [1, 2], 'turn events until the listener is removed');
  assert.deepEqual(out.turns, [
    '1:user:We chose PostgreSQL for the ledger \u{fffd} and \u{0} too.',
    '2:assistant:Noted: PostgreSQL.',
    '3:user:after off',
  ]);
  assert.deepEqual(out.hits.sort(), [1, 2]);
  assert.equal(out.weird, true);
  assert.match(out.recall, /PostgreSQL for the ledger/);
  assert.match(out.badRecall, /^recall error: unknown action "find"/);
  assert.deepEqual(out.fork, [true, 1]);
  assert.equal(out.context[0], 'system');
  assert.deepEqual(out.context[1], [1, 2, 3]);
  assert.deepEqual(out.context[2], ['conversation_recall', 'delegate_task']);
  assert.deepEqual(out.resumed, [2, 3]);
  assert.equal(out.count, 3);
  assert.deepEqual(out.direct, ['Fix the login form. Never use an ORM.', 1, ['edit src/login.ts']]);
  assert.deepEqual(out.tools, ['read_file', 'write_file']);
  assert.equal(out.toolTurns.length, 3);
  assert.equal(out.toolTurns[0], 'Error: disk is read-only');
  assert.match(out.toolTurns[1], /^\d+$/, 'the tool read the archive while the reply that called it waited');
  assert.ok(Number(out.toolTurns[1]) >= 4, `it counted the turns (${out.toolTurns[1]})`);
  assert.match(out.toolTurns[2], /^Error: send: a reply is waiting for this tool's result/);
  assert.deepEqual(out.unregistered, [true, false]);
  const expected = [
    /^Error\[invalid\]: openArchive: storage must be "opfs" or "memory", not "tape"$/,
    /^Error\[invalid\]: openArchive: options: unknown field `storge`/,
    /^Error\[not_found\]: getSession: .*no-such-session/,
    /^Error\[invalid\]: send: text is required$/,
    /^Error\[invalid\]: readTurns: limit must be at least 1$/,
    /^Error\[invalid\]: appendTurn: turn: unknown variant `narrator`/,
    /^Error\[invalid\]: send: model\.base_url: /,
    /^Error\[invalid\]: registerTool: tool name "has space" is not allowed/,
    /^Error\[invalid\]: registerTool: conversation_recall is built in/,
    /^Error\[invalid\]: registerTool: the tool needs a handler function$/,
    /^Error\[invalid\]: on: unknown event "nonsense"/,
  ];
  // Every rejection carries its kind (the declared CoworkError), so a page picks a remedy by kind.
  out.errors.forEach((e, i) => assert.match(e, expected[i]));
  assert.match(out.closed, /^Error\[storage\]: listSessions: the archive is closed/);
  assert.deepEqual(page.problems, []);
  await page.close();
});

const HOSTILE = `<!doctype html>
<html><head><title>Hostile host</title>
<style>
  * { all: unset; }
  #panel { display: block; width: 900px; height: 560px; }
  .probe { color: rgb(1, 2, 3); font-size: 13px; }
</style></head>
<body>
  <p class="probe" id="before">text of the host page</p>
  <div id="panel"></div>
  <button class="probe" id="host-button">a host button</button>
  <script type="module">
    import init, { mount } from '/embed/cowork.js';
    await init();
    window.coworkUi = mount(document.getElementById('panel'));
    document.body.dataset.mounted = 'yes';
  </script>
</body></html>`;

test('mount() puts the whole UI into a host element of a page with `* { all: unset }`, and it works there', async (t) => {
  // A browser of its own: the app's service worker (registered by an earlier test) would answer the
  // made-up page's request before Playwright's route could.
  const browser = await launchBrowser();
  t.after(() => browser.close());
  const page = await browser.context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  const url = new URL('/hostile-host.html', app.server.url).href;
  await page.route(url, (route) => route.fulfill({ contentType: 'text/html', body: HOSTILE }));
  await page.goto(url);
  const probe = () =>
    page.evaluate(() => {
      const s = (id) => getComputedStyle(document.getElementById(id));
      return [s('before').color, s('before').fontSize, s('host-button').display, document.styleSheets.length];
    });
  const before = await probe();
  await page.locator('body[data-mounted="yes"]').waitFor({ timeout: 30_000 });
  await page.locator('#panel .storage-status[data-state="ready"]').waitFor({ timeout: 30_000 });

  // Its styles apply inside the host element, fill it, and nothing leaks out.
  const layout = await page.evaluate(() => {
    const ui = document.getElementById('panel').shadowRoot;
    const box = (sel) => ui.querySelector(sel).getBoundingClientRect();
    const panel = document.getElementById('panel').getBoundingClientRect();
    return {
      panel: [panel.width, panel.height],
      app: [box('.app').width, box('.app').height],
      header: getComputedStyle(ui.querySelector('.app-header')).display,
      sidebar: box('.sidebar').width,
      font: getComputedStyle(ui.querySelector('.app')).fontFamily,
    };
  });
  assert.deepEqual(layout.panel, [900, 560]);
  assert.deepEqual(layout.app, [900, 560], 'the UI fills the host element');
  assert.equal(layout.header, 'flex');
  assert.equal(layout.sidebar, 280);
  assert.match(layout.font, /system-ui/);
  assert.deepEqual(await probe(), before, 'the host page looks the same after mounting');

  // It works: a message gets its streamed reply, a dialog opens inside the host element.
  const message = page.locator('#panel').getByLabel('Message', { exact: true });
  await message.fill('hello from a hostile page');
  await message.press('Enter');
  await page.locator('#panel .turn[data-role="assistant"]', { hasText: 'hello from a hostile page' }).waitFor({ timeout: 20_000 });
  // A code block is coloured there too, by the highlighter the module serves beside itself.
  await page.locator('#panel').getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 20_000 });
  await message.fill('[[code:rust]]\nfn main() {}');
  await message.press('Enter');
  const keyword = page.locator('#panel code.language-rust[data-highlight="done"] .hljs-keyword', { hasText: 'fn' });
  await keyword.waitFor({ timeout: 20_000 });
  const plain = await page.locator('#panel code.language-rust').evaluate((c) => getComputedStyle(c.closest('pre')).color);
  assert.notEqual(await keyword.evaluate((k) => getComputedStyle(k).color), plain, 'the token colours apply in the shadow root');
  await page.locator('#panel').getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 20_000 });
  await page.locator('#panel').getByRole('button', { name: 'Settings' }).click();
  const dialog = await page.locator('#panel .dialog').boundingBox();
  const panel = await page.locator('#panel').boundingBox();
  const inside = dialog.x >= panel.x && dialog.y >= panel.y &&
    dialog.x + dialog.width <= panel.x + panel.width && dialog.y + dialog.height <= panel.y + panel.height;
  assert.ok(inside, `the dialog ${JSON.stringify(dialog)} is inside the host element ${JSON.stringify(panel)}`);
  await page.keyboard.press('Escape');
  await page.locator('#panel .dialog').waitFor({ state: 'detached' });

  await page.screenshot({ path: join(SHOTS, 'embed-mounted-hostile-css.png') });

  // Its shortcuts work inside it and leave the host page's own alone.
  await page.locator('#host-button').focus();
  await page.keyboard.press('Control+k');
  await page.waitForTimeout(300);
  assert.equal(await page.locator('#panel .dialog').count(), 0, 'Ctrl+K outside the UI is the page’s');
  await message.focus();
  await page.keyboard.press('Control+k');
  await page.locator('#panel .dialog').waitFor();
  await page.keyboard.press('Escape');
  await page.locator('#panel .dialog').waitFor({ state: 'detached' });

  // While the UI stays, a second mount is refused with a clear error.
  const second = await page.evaluate(async () => {
    const { mount } = await import('/embed/cowork.js');
    try {
      mount(document.getElementById('before'));
      return 'mounted twice';
    } catch (e) {
      return e.message;
    }
  });
  assert.match(second, /^mount: Cowork is already mounted in this page; unmount\(\) it first$/);

  // Unmounting removes it; mounting again works.
  await page.evaluate(() => window.coworkUi.unmount());
  assert.equal(await page.evaluate(() => document.getElementById('panel').shadowRoot.childElementCount), 0);
  await page.evaluate(async () => {
    const { mount } = await import('/embed/cowork.js');
    window.coworkUi = mount(document.getElementById('panel'));
  });
  await page.locator('#panel .session-row', { hasText: 'hello from a hostile page' }).waitFor({ timeout: 30_000 });
  assert.deepEqual(problems, []);
  await page.close();
});

test('a mounted UI stays when the page drops its handle and the garbage collector runs', async (t) => {
  const browser = await launchBrowser({ args: ['--js-flags=--expose-gc'] });
  t.after(() => browser.close());
  const page = await browser.context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  const url = new URL('/ide-panel.html', app.server.url).href;
  const body = `<!doctype html><body style="margin:0"><div id="panel" style="width:400px;height:700px"></div>
    <script type="module">
      import init, { mount } from '/embed/cowork.js';
      await init();
      mount(document.getElementById('panel')); // the handle is not kept
      document.body.dataset.mounted = 'yes';
    </script></body>`;
  await page.route(url, (route) => route.fulfill({ contentType: 'text/html', body }));
  await page.goto(url);
  await page.locator('body[data-mounted="yes"]').waitFor({ timeout: 30_000 });
  await page.evaluate(async () => {
    for (let i = 0; i < 5; i++) {
      window.gc();
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  const message = page.locator('#panel').getByLabel('Message', { exact: true });
  await message.fill('still here after a collection');
  await message.press('Enter');
  await page.locator('#panel .turn[data-role="assistant"]', { hasText: 'still here after a collection' }).waitFor({ timeout: 20_000 });
  assert.deepEqual(problems, []);
  await page.close();
});

test('the TypeScript declarations: tsc --noEmit passes on a file that uses every export', async () => {
  const declarations = join(DIST, 'embed', 'cowork.d.ts');
  assert.ok(existsSync(declarations), `built by scripts/embed.sh: ${declarations}`);
  const tsc = join(root, 'tests/e2e/node_modules/.bin/tsc');
  const project = join(root, 'web/embed/example/tsconfig.json');
  const { code, output } = await new Promise((ok) =>
    execFile(tsc, ['--noEmit', '-p', project], { timeout: 120_000 }, (error, stdout, stderr) =>
      ok({ code: error ? error.code ?? 1 : 0, output: stdout + stderr }),
    ),
  );
  assert.equal(code, 0, output);
});

test('addMcpServer: an MCP server’s tool and the page’s own tool called in one session, the MCP call approved by the handler and seen in the events', async () => {
  // A real server-everything on loopback, for this test alone.
  const everything = await startEverything();
  try {
    const origin = new URL(everything.url).origin;
    const page = await openPage(app.browser.context, new URL('/examples/embed/', app.server.url).href, { expectLoadFailuresFrom: [origin] });
    await page.locator('body[data-ready="true"]').waitFor({ timeout: 30_000 });
    const out = await page.evaluate(async (url) => {
      const { default: init, openArchive } = await import('/embed/cowork.js');
      await init();
      const err = async (f) => {
        try {
          await f();
          return 'no error';
        } catch (e) {
          return `${e instanceof Error ? 'Error' : typeof e}[${e.kind}]: ${e.message}`;
        }
      };
      const a = await openArchive({ storage: 'memory' });
      const r = {};
      r.server = await a.addMcpServer(url, { name: 'everything', token: 'embed-secret-7c1d', workspace: 'mcp', policy: 'always_ask' });
      const approvals = [];
      a.setApprovalHandler((request) => {
        approvals.push(request);
        return true;
      });
      const written = [];
      a.registerTool({ name: 'write_file', parameters: { type: 'object' }, handler: (args) => (written.push(args), 'written') });
      const events = [];
      a.on('tool', (e) => events.push(`${e.event} ${e.name}`));
      const s = await a.createSession({ workspace: 'mcp' });
      await a.send(s.id, '[[mcp:everything/echo {"message": "from the embedding page"}]]');
      await a.send(s.id, 'write file notes/a.md: hi');
      r.toolTurns = (await a.readTurns(s.id)).filter((t) => t.role === 'tool').map((t) => `${t.tool_name}: ${t.content}`);
      r.approvals = approvals.map((q) => [q.name, q.mcp]);
      r.events = events;
      r.written = written.length;
      r.again = await err(() => a.addMcpServer(url, { name: 'everything', workspace: 'mcp' }));
      r.notUrl = await err(() => a.addMcpServer('ftp://127.0.0.1/mcp'));
      return r;
    }, everything.url);
    assert.deepEqual(Object.keys(out.server).sort(), ['auth', 'enabled', 'id', 'name', 'policy', 'url'], 'no token in what the workspace keeps');
    assert.equal(out.server.auth, 'bearer');
    assert.deepEqual(out.toolTurns, ['everything__echo: Echo: from the embedding page', 'write_file: written']);
    assert.deepEqual(out.approvals, [['everything__echo', { server: 'everything', tool: 'echo' }]], 'its policy asks; the page tool does not');
    assert.deepEqual(out.events, ['tool_started everything__echo', 'tool_finished everything__echo', 'tool_started write_file', 'tool_finished write_file']);
    assert.equal(out.written, 1);
    assert.match(out.again, /^Error\[invalid\]: addMcpServer: workspace "mcp" already has a server named "everything"/);
    assert.match(out.notUrl, /^Error\[invalid\]: addMcpServer: "ftp:\/\/127\.0\.0\.1\/mcp" is not an http\(s\) URL of an MCP server$/);
    assert.deepEqual(page.problems, []);
    await page.close();
  } finally {
    everything.child.kill('SIGKILL');
  }
});

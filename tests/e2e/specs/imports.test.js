// Your whole AI history, in and out: other tools' exports imported through the Storage panel (a
// preview first, then the import, a summary that opens the new sessions), found by search and by
// conversation_recall; re-imports that add nothing and truncated files that add nothing and say
// where; a file with a broken conversation that imports the others and names it; the automatic
// backup to a folder, whose snapshot re-imports into a fresh browser.
//
// The fixtures are small hand-made files written by this test (no real exports).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useServerAndBrowser, launchBrowser, openPage, ready, replyDone, send, exportArchive, newWorkspace } from '../harness.js';

const app = useServerAndBrowser();
const dir = mkdtempSync(join(tmpdir(), 'cowork-imports-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

const iso = (s) => new Date(Date.UTC(2025, 0, 10, 8, 0, s)).toISOString();
const node = (id, parent, children, role, text, t) => ({
  id, parent, children,
  message: role && {
    id, author: { role, name: null, metadata: {} }, create_time: t,
    content: { content_type: 'text', parts: [text] }, status: 'finished_successfully', metadata: {}, recipient: 'all',
  },
});

/** ChatGPT: one conversation whose answer was regenerated (a branch → a fork). */
const chatgpt = [{
  title: 'Kayak trip', conversation_id: 'conv-kayak', create_time: 1_700_000_000.5, update_time: 1_700_000_100.5,
  current_node: 'a1',
  mapping: {
    root: node('root', null, ['u1'], null),
    u1: node('u1', 'root', ['a1', 'a2'], 'user', 'Plan the kayak trip to the fjords', 1_700_000_001),
    a2: node('a2', 'u1', [], 'assistant', 'Rent kayaks in Bergen.', 1_700_000_002),
    a1: node('a1', 'u1', [], 'assistant', 'Pack a drysuit for the Geiranger fjord crossing.', 1_700_000_003),
  },
}];

/** Claude.ai: one conversation. */
const claudeAi = [{
  uuid: 'claude-sourdough', name: 'Sourdough', created_at: iso(0), updated_at: iso(9), account: { uuid: 'acct' },
  chat_messages: [
    { uuid: 'h1', sender: 'human', text: 'How do I feed a sourdough starter?', content: [{ type: 'text', text: 'How do I feed a sourdough starter?' }], created_at: iso(1) },
    { uuid: 'h2', sender: 'assistant', text: '', content: [{ type: 'text', text: 'Feed the rye starter twice daily with equal flour and water.' }], created_at: iso(2) },
  ],
}];

/** Claude Code: two sessions in one project folder (as `~/.claude/projects/<project>/` holds them). */
const cc = (session, uuid, parent, role, text, s) => JSON.stringify({
  parentUuid: parent, isSidechain: false, userType: 'external', cwd: '/home/ana/zoo', sessionId: session,
  version: '1.0.80', type: role,
  message: role === 'user' ? { role, content: text } : { role, content: [{ type: 'text', text }], model: 'claude-sonnet-4-5' },
  uuid, timestamp: iso(s),
});
const claudeCode = {
  'sess-zebra.jsonl': [
    cc('sess-zebra', 'z1', null, 'user', 'Draft the zebra migration plan for the savanna exhibit', 10),
    cc('sess-zebra', 'z2', 'z1', 'assistant', 'The zebra migration starts at the north gate at dawn.', 11),
  ].join('\n') + '\n',
  'sess-otter.jsonl': [
    cc('sess-otter', 'o1', null, 'user', 'Who cleans the otter pool?', 20),
    cc('sess-otter', 'o2', 'o1', 'assistant', 'The otter pool is scrubbed by the Tuesday crew.', 21),
  ].join('\n') + '\n',
};

/** Codex CLI: one rollout. */
const codex = [
  { timestamp: iso(30), type: 'session_meta', payload: { id: 'codex-lighthouse', timestamp: iso(30), cwd: '/work/lighthouse', originator: 'codex_cli_rs' } },
  { timestamp: iso(31), type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Why does the lighthouse beacon flicker?' }] } },
  { timestamp: iso(32), type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'The beacon flickers because its capacitor is failing.' }] } },
].map((l) => JSON.stringify(l)).join('\n') + '\n';

/** OpenAI messages. */
const openai = [
  { role: 'user', content: 'Translate the word marmalade into Portuguese' },
  { role: 'assistant', content: 'Marmalade is marmelada in Portuguese.' },
];

function write(name, content) {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 1));
  return path;
}

const result = (page) => page.locator('.dialog.storage .import-result');

/** Chooses `files` (or a folder) in the Storage panel; resolves to the preview's text. */
async function preview(page, files, { folder = false } = {}) {
  await page.getByLabel(folder ? 'Import a folder' : 'Import files').setInputFiles(files);
  const status = result(page).filter({ hasText: /→|Nothing was imported/ });
  await status.waitFor({ timeout: 20_000 });
  return status.innerText();
}

/** Presses Import after a preview; resolves to the summary. */
async function importChosen(page) {
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  const done = result(page).filter({ hasText: /^Imported|Nothing was imported/ });
  await done.waitFor({ timeout: 30_000 });
  return done.innerText();
}

/** Searches every session (Ctrl+K) for `words`; resolves to the first hit's text. */
async function search(page, words) {
  await page.keyboard.press('Control+k');
  const box = page.getByRole('combobox', { name: 'Search all sessions' });
  await box.fill(words);
  const hit = page.locator('.hit').filter({ has: page.locator('mark') }).first();
  await hit.waitFor({ timeout: 10_000 });
  const text = await hit.innerText();
  await page.keyboard.press('Escape');
  return text;
}

const turnsOf = (lines) => lines.filter((l) => l.type === 'turn').map((t) => [t.session_id, t.turn_number, t.role, t.content, t.created_at]);
const sessionsOf = (lines) => lines.filter((l) => l.type === 'session').map((s) => [s.id, s.title, s.workspace, s.parent_session_id, s.fork_turn]);

test('one file of each format imports through the Storage panel, into its workspace, found by search and recall', async () => {
  // The importer (dist/import/) is the storage worker's to load on the first import, not at start (the
  // service worker's precaching of it aside).
  const importerLoads = [];
  app.browser.context.on('request', (r) => {
    if (/\/import\/importer/.test(r.url()) && !r.serviceWorker()) importerLoads.push(r.url());
  });
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.locator('.storage-usage').click();
  assert.deepEqual(importerLoads, [], 'the importer is not loaded at start');

  // ChatGPT: the preview counts the branch, the import adds a session and its fork.
  const said = await preview(page, write('conversations.json', chatgpt));
  assert.ok(importerLoads.some((u) => u.endsWith('importer_bg.wasm')), `the first import loads the importer: ${importerLoads}`);
  assert.equal(said, 'conversations.json (ChatGPT): 1 conversation, 3 messages, 1 branch → 1 session + 1 fork.');
  assert.equal(await importChosen(page), 'Imported 1 session + 1 fork with 3 messages.');
  // The summary links to the new session, which opens.
  await page.locator('.import-links a', { hasText: 'Kayak trip' }).click();
  await page.locator('.turn[data-role="assistant"]', { hasText: 'Geiranger fjord' }).waitFor();
  await page.locator('.storage-usage').click();

  assert.match(await preview(page, write('claude.json', claudeAi)), /^claude\.json \(Claude\.ai\): 1 conversation, 2 messages/);
  assert.match(await importChosen(page), /^Imported 1 session \+ 0 forks with 2 messages/);

  // Claude Code, as a folder: its transcripts are read, anything else in it is left aside.
  const project = join(dir, 'project');
  mkdirSync(project, { recursive: true });
  for (const [name, text] of Object.entries(claudeCode)) writeFileSync(join(project, name), text);
  writeFileSync(join(project, 'notes.txt'), 'not a transcript');
  const folderSaid = await preview(page, project, { folder: true });
  assert.match(folderSaid, /^2 files \(Claude Code\) \(1 other files in the folder left aside\): 2 conversations, 4 messages/);
  assert.match(await importChosen(page), /^Imported 2 sessions \+ 0 forks with 4 messages/);

  assert.match(await preview(page, write('rollout-2025-01-10.jsonl', codex)), /\(Codex\): 1 conversation, 2 messages/);
  assert.match(await importChosen(page), /^Imported 1 session/);
  assert.match(await preview(page, write('messages.json', openai)), /\(OpenAI messages\): 1 conversation, 2 messages/);
  assert.match(await importChosen(page), /^Imported 1 session/);
  await page.getByRole('button', { name: 'Close' }).click();

  // Each under its workspace: the tools' own working directories, or the format's import workspace.
  const group = (name) => page.locator('.workspace-group').filter({ has: page.locator('.workspace-name', { hasText: name }) });
  for (const [workspace, title] of [
    ['ChatGPT import', 'Kayak trip'],
    ['Claude.ai import', 'Sourdough'],
    ['/home/ana/zoo', 'zebra migration'],
    ['/home/ana/zoo', 'otter pool'],
    ['/work/lighthouse', 'lighthouse beacon'],
    ['OpenAI messages import', ''],
  ]) {
    await group(workspace).locator('.session-row', { hasText: title }).first().waitFor({ timeout: 10_000 });
  }

  // Ctrl+K finds a sentence from each.
  for (const [words, sentence] of [
    ['drysuit', /Pack a drysuit for the Geiranger fjord/],
    ['rye starter', /Feed the rye starter twice daily/],
    ['savanna', /zebra migration plan for the savanna exhibit/],
    ['capacitor', /beacon flickers because its capacitor/],
    ['marmelada', /Marmalade is marmelada/],
  ]) {
    assert.match(await search(page, words), sentence, `searching ${words}`);
  }

  // conversation_recall over the workspace finds an imported turn (the demo model recalls over the
  // workspace when the message says "workspace").
  await newWorkspace(page, '/home/ana/zoo');
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'Remember the zebra migration in this workspace?');
  await replyDone(page);
  await page.locator('.turn[data-role="assistant"]', { hasText: 'conversation_recall returned' }).waitFor({ timeout: 20_000 });
  const recalled = await page.locator('.tool-result', { hasText: 'Result of conversation_recall' }).last().textContent();
  // Words only the imported Claude Code session holds.
  assert.match(recalled, /savanna exhibit|north gate/, recalled);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('exports in other formats: ChatGPT JSON that imports back, and Markdown, made by the importer loaded on first use', async () => {
  // A browser of its own, so no earlier test's worker has the importer already.
  const browser = await launchBrowser();
  try {
    const loads = [];
    browser.context.on('request', (r) => {
      if (/\/import\/importer/.test(r.url()) && !r.serviceWorker()) loads.push(r.url());
    });
    const page = await openPage(browser.context, app.server.url);
    await ready(page);
    await send(page, 'the weir by the old mill holds the otters');
    await replyDone(page);
    assert.deepEqual(loads, [], 'not loaded by a chat');
    const download = async (click) => {
      const { readFile } = await import('node:fs/promises');
      const [file] = await Promise.all([page.waitForEvent('download'), click()]);
      return { name: file.suggestedFilename(), text: await readFile(await file.path(), 'utf8') };
    };

    // ChatGPT's format, from the Storage panel.
    await page.locator('.storage-usage').click();
    const chatgpt = await download(() => page.getByRole('button', { name: 'Export all (ChatGPT JSON)' }).click());
    assert.ok(loads.some((u) => u.endsWith('importer_bg.wasm')), `the first such export loads the importer: ${loads}`);
    const conversations = JSON.parse(chatgpt.text);
    assert.equal(conversations.length, 1, chatgpt.text.slice(0, 400));
    const texts = Object.values(conversations[0].mapping).map((n) => n.message?.content?.parts?.join('') ?? '');
    assert.ok(texts.includes('the weir by the old mill holds the otters'), 'the user turn, verbatim');
    // It reads back: the preview of the file just exported finds the conversation and its messages.
    const file = join(dir, 'exported-conversations.json');
    writeFileSync(file, chatgpt.text);
    assert.match(await preview(page, file), /^exported-conversations\.json \(ChatGPT\): 1 conversation, 2 messages/);
    await page.keyboard.press('Escape');

    // Markdown, from the session's menu.
    await page.locator('.session-row').first().getByRole('button', { name: /^Actions for/ }).click();
    const markdown = await download(() => page.getByRole('menuitem', { name: 'Export as Markdown' }).click());
    assert.match(markdown.name, /\.md$/);
    assert.match(markdown.text, /^# .*\n/);
    assert.match(markdown.text, /## Turn \d+ · user\n\nthe weir by the old mill holds the otters\n/);
    assert.match(markdown.text, /## Turn 2 · assistant/);
  } finally {
    await browser.close();
  }
});

test('a re-import adds nothing, and a truncated file is refused naming where, adding nothing', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  const before = await exportArchive(page);
  await page.locator('.storage-usage').click();
  const again = await preview(page, join(dir, 'conversations.json'));
  assert.equal(again, 'conversations.json (ChatGPT): 1 conversation, 0 messages, 0 branches → 0 sessions + 0 forks; 1 already imported. Nothing new to import.');
  assert.ok(await page.getByRole('button', { name: 'Import', exact: true }).isDisabled(), 'nothing to import');
  await page.getByRole('button', { name: 'Cancel' }).click();

  // Several files at once, one of them cut short: nothing of any is added, and the error says where.
  const whole = JSON.stringify(claudeAi.map((c) => ({ ...c, uuid: 'claude-new', name: 'Never added' })));
  const cut = write('cut.json', whole.slice(0, Math.floor(whole.length * 0.6)));
  await page.getByLabel('Import files').setInputFiles([write('fresh.json', openai.concat([{ role: 'user', content: 'new' }])), cut]);
  const refused = result(page).filter({ hasText: 'Nothing was imported' });
  await refused.waitFor({ timeout: 20_000 });
  const why = await refused.innerText();
  assert.match(why, /cut\.json/, why);
  assert.match(why, /truncated/, why);
  assert.match(why, /line \d+, column \d+ \(byte \d+\)/, why);
  assert.equal(await page.getByRole('button', { name: 'Import', exact: true }).count(), 0, 'no Import offered');
  await page.getByRole('button', { name: 'Close' }).click();
  const after = await exportArchive(page);
  assert.deepEqual(turnsOf(after), turnsOf(before), 'nothing was added');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a file with one broken conversation imports the other two and names the broken one', async () => {
  // ChatGPT's conversations.json, whose second entry lost its `mapping` (as a damaged export has it).
  const chat = (id, title, t, user, reply) => ({
    title, conversation_id: id, create_time: t, update_time: t + 60, current_node: `${id}-a`,
    mapping: {
      [`${id}-root`]: node(`${id}-root`, null, [`${id}-u`], null),
      [`${id}-u`]: node(`${id}-u`, `${id}-root`, [`${id}-a`], 'user', user, t + 1),
      [`${id}-a`]: node(`${id}-a`, `${id}-u`, [], 'assistant', reply, t + 2),
    },
  });
  const lost = chat('conv-lost', 'Lost in transit', 1_700_100_100, 'x', 'y');
  delete lost.mapping;
  const file = write('three.json', [
    chat('conv-orchard', 'Orchard pruning', 1_700_100_000, 'When should I prune the pear trees?', 'Prune pear trees in late winter, before the buds swell.'),
    lost,
    chat('conv-kiln', 'Kiln firing', 1_700_100_200, 'How hot does a stoneware kiln fire?', 'Stoneware fires at about 1,200 to 1,300 °C.'),
  ]);
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.locator('.storage-usage').click();
  const skipped = 'skipped 1 conversation that cannot be read: entry 2 ("Lost in transit"): it has no "mapping" (its messages).';
  assert.equal(await preview(page, file), `three.json (ChatGPT): 2 conversations, 4 messages, 0 branches → 2 sessions + 0 forks; ${skipped}`);
  assert.equal(await importChosen(page), `Imported 2 sessions + 0 forks with 4 messages; ${skipped}`);
  // The summary opens both; the sidebar lists both, and nothing of the broken one.
  const links = await page.locator('.import-links a').allInnerTexts();
  assert.deepEqual(links, ['Orchard pruning', 'Kiln firing']);
  await page.getByRole('button', { name: 'Close' }).click();
  const group = page.locator('.workspace-group').filter({ has: page.locator('.workspace-name', { hasText: 'ChatGPT import' }) });
  for (const title of ['Orchard pruning', 'Kiln firing']) await group.locator('.session-row', { hasText: title }).waitFor({ timeout: 10_000 });
  assert.equal(await page.locator('.session-row', { hasText: 'Lost in transit' }).count(), 0);
  await group.locator('.session-row', { hasText: 'Kiln firing' }).locator('button.session').click();
  await page.locator('.turn[data-role="assistant"]', { hasText: 'Stoneware fires at about 1,200' }).waitFor({ timeout: 10_000 });
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a week without a backup raises a banner', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.evaluate(() => {
    const record = JSON.parse(localStorage.getItem('cowork.backup'));
    localStorage.setItem('cowork.backup', JSON.stringify({ ...record, first_use_at: Date.now() - 8 * 86_400_000 }));
  });
  await page.reload();
  await ready(page);
  const banner = page.locator('.backup-banner', { hasText: 'No backup yet' });
  await banner.waitFor({ timeout: 10_000 });
  await banner.getByRole('button', { name: 'Open Storage' }).click();
  await page.locator('.dialog.storage .backup-status', { hasText: 'not backed up yet' }).waitFor();
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('backing up to a folder writes snapshots, keeps the last K, and a snapshot re-imports identically', async () => {
  // Headless Chromium cannot click through the folder picker: the page's `showDirectoryPicker` is
  // replaced by one that returns a folder of the origin's private file system (OPFS), which has the
  // same handle type (it is kept in IndexedDB and written to the same way).
  const picker = () => {
    window.showDirectoryPicker = async () => (await navigator.storage.getDirectory()).getDirectoryHandle('backups', { create: true });
  };
  // The app may prune an old snapshot between the listing and the reading (a check that came due):
  // then the folder is read again.
  const listBackups = (page) => page.evaluate(async () => {
    const folder = await (await navigator.storage.getDirectory()).getDirectoryHandle('backups', { create: true });
    for (let attempt = 0; ; attempt++) {
      try {
        const out = {};
        // Only snapshots: a write in progress has a swap file beside them (Chromium's `.crswap`).
        for await (const [name, handle] of folder.entries()) {
          if (name.endsWith('.jsonl')) out[name] = await (await handle.getFile()).text();
        }
        return out;
      } catch (e) {
        if (e.name !== 'NotFoundError' || attempt === 4) throw e;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  });
  const source = await launchBrowser();
  const fresh = await launchBrowser();
  try {
    await source.context.addInitScript(picker);
    const page = await openPage(source.context, app.server.url);
    await ready(page);
    await page.getByRole('button', { name: '+ New session' }).click();
    await send(page, 'backup alpha: the heron nests by the reservoir');
    await replyDone(page);
    await page.locator('.storage-usage').click();
    await page.locator('.dialog.storage .backup-status', { hasText: 'No backup folder chosen' }).waitFor();
    await page.getByRole('button', { name: 'Back up to a folder…' }).click();
    await page.locator('.dialog.storage .backup-status', { hasText: /Backing up to “backups”.*last backed up/ }).waitFor({ timeout: 20_000 });
    let files = await listBackups(page);
    const first = Object.keys(files);
    assert.equal(first.length, 1, JSON.stringify(first));
    assert.match(first[0], /^cowork-backup-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ\.jsonl$/);

    // Keep one: the next snapshot replaces the first.
    await page.getByLabel('Snapshots kept').fill('1');
    await page.getByLabel('Snapshots kept').press('Tab');
    await page.waitForTimeout(1100); // names have a one-second resolution
    await page.getByRole('button', { name: 'Back up now' }).click();
    // The new snapshot alone, and whole: its file is there (empty) from the moment it is created.
    await page.waitForFunction(async (old) => {
      const folder = await (await navigator.storage.getDirectory()).getDirectoryHandle('backups');
      const names = [];
      for await (const name of folder.keys()) if (name.endsWith('.jsonl')) names.push(name);
      if (names.length !== 1 || names[0] === old) return false;
      const text = await (await (await folder.getFileHandle(names[0])).getFile()).text().catch(() => '');
      return text.trim().split('\n').at(-1).includes('"type":"end"');
    }, first[0], { timeout: 20_000 });
    files = await listBackups(page);
    // The whole snapshot (another one may be starting beside it, its file still empty).
    const [snapshot] = Object.values(files).filter((text) => text.trim().split('\n').at(-1).includes('"type":"end"'));
    await page.getByRole('button', { name: 'Close' }).click();
    const exported = await exportArchive(page);
    assert.deepEqual(turnsOf(snapshot.trim().split('\n').map((l) => JSON.parse(l))), turnsOf(exported), 'the snapshot holds the archive');

    // The snapshot, imported into a fresh browser, gives the same archive.
    const file = write('snapshot.jsonl', snapshot);
    const other = await openPage(fresh.context, app.server.url);
    await ready(other);
    await other.locator('.storage-usage').click();
    assert.match(await preview(other, file), /^snapshot\.jsonl \(Cowork\): 1 conversation, 2 messages/);
    assert.match(await importChosen(other), /^Imported 1 session/);
    await other.getByRole('button', { name: 'Close' }).click();
    const reimported = await exportArchive(other);
    assert.deepEqual(turnsOf(reimported), turnsOf(exported), 'the same turns');
    assert.deepEqual(sessionsOf(reimported), sessionsOf(exported), 'the same sessions');
    assert.deepEqual([...page.problems, ...other.problems], []);
  } finally {
    await source.close();
    await fresh.close();
  }
});

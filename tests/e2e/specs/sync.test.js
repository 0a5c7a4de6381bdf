// Sync across devices through a real NATS JetStream server on loopback: browser profiles are devices
// with their own OPFS archives. What one writes, the other shows; a wrong passphrase or wrong
// credentials are refused and leave the local archive alone; devices that wrote while offline converge;
// a team space is shared by two people, one of whom may not open the other's personal space; the
// server killed mid-sync loses and repeats nothing; a third device joins with everything; the server's
// store holds no sentence the user typed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { script, chatgptExport, watchHeader } from '../sync-support.js';
import { startServer, launchBrowser, openPage, ready, replyDone, send, exportArchive, importFile } from '../harness.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const nats = { dir: mkdtempSync(join(tmpdir(), 'cowork-nats-')) };
const app = {};

before(async () => {
  nats.env = script('nats.sh', ['start', nats.dir]);
  app.server = await startServer();
});

after(async () => {
  await app.server?.stop();
  try {
    script('nats.sh', ['stop', nats.dir]);
  } finally {
    rmSync(nats.dir, { recursive: true, force: true });
  }
});

/** Sets sync up on `page` as device `device` and waits for the header to say so. */
/** With `makeKey`, a recovery key is made in the dialog and used as the passphrase; resolves to it. */
async function turnOnSync(page, { device, passphrase = 'correct horse battery staple', user = 'alice', password, space = '', makeKey = false }) {
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  await page.getByRole('tab', { name: 'Sync', exact: true }).click();
  const dialog = page.locator('.sync-dialog');
  await dialog.locator('input[name="sync-server"]').fill(nats.env.NATS_WS_URL);
  await dialog.locator('input[name="sync-user"]').fill(user);
  await dialog.locator('input[name="sync-password"]').fill(password ?? `${user}-secret`);
  await dialog.locator('input[name="sync-space"]').fill(space);
  await dialog.locator('input[name="sync-passphrase"]').fill(passphrase);
  let key;
  if (makeKey) {
    await dialog.getByRole('button', { name: 'Make a recovery key' }).click();
    key = await dialog.locator('.recovery-key code').innerText();
    assert.equal(await dialog.locator('input[name="sync-passphrase"]').inputValue(), key, 'the key is the passphrase');
  }
  await dialog.locator('input[name="sync-device"]').fill(device);
  await dialog.getByRole('button', { name: 'Sync this archive' }).click();
  await dialog.getByRole('button', { name: 'Close' }).click();
  return key;
}

/** Every file under `dir`, read whole, one after another. */
function allBytes(dir) {
  const files = (d) =>
    readdirSync(d).flatMap((name) => (statSync(join(d, name)).isDirectory() ? files(join(d, name)) : [join(d, name)]));
  return Buffer.concat(files(dir).map((f) => readFileSync(f)));
}

test('what one device writes the other shows; a wrong passphrase is refused; the server sees no text', async (t) => {
  const laptop = await launchBrowser();
  const phone = await launchBrowser();
  const stranger = await launchBrowser();
  try {
    const a = await openPage(laptop.context, app.server.url);
    await ready(a);
    const first = 'sync e2e: the quokka migration plan';
    await send(a, first);
    await a.locator('.turn[data-role="assistant"]').first().waitFor({ timeout: 20_000 });
    await replyDone(a);
    await turnOnSync(a, { device: 'Laptop' });
    await a.locator('.sync-status', { hasText: 'Synced' }).waitFor({ timeout: 20_000 });

    // A second device with the same space and passphrase receives the whole archive.
    const b = await openPage(phone.context, app.server.url);
    await ready(b);
    await turnOnSync(b, { device: 'Phone' });
    await b.locator('.sync-status', { hasText: 'Synced' }).waitFor({ timeout: 20_000 });
    await b.locator('.session', { hasText: first }).click({ timeout: 20_000 });
    await b.locator('.turn[data-role="user"]', { hasText: first }).waitFor();
    await b.locator('.turn[data-role="assistant"]').first().waitFor();

    // Live: an exchange on the laptop shows on the phone, whose session is open, within 2 s of the
    // reply being saved there.
    const second = 'sync e2e: and the wombat rollback';
    await send(a, second);
    await a.locator('.turn[data-role="user"]', { hasText: second }).waitFor({ timeout: 20_000 });
    await replyDone(a);
    const saved = Date.now();
    await b.locator('.turn[data-role="user"]', { hasText: second }).waitFor({ timeout: 10_000 });
    await b.waitForFunction(() => document.querySelectorAll('.turn[data-role="assistant"]').length >= 2, null, {
      timeout: 10_000,
    });
    const latency = Date.now() - saved;
    t.diagnostic(`laptop → phone: ${latency} ms`);
    assert.ok(latency <= 2000, `the phone showed the laptop's exchange ${latency} ms after it was saved (goal ≤ 2 s)`);
    const [ea, eb] = [await exportArchive(a), await exportArchive(b)];
    const turns = (lines) => lines.filter((l) => l.type === 'turn').map((t) => `${t.role}:${t.content}`).sort();
    assert.deepEqual(turns(eb), turns(ea), 'both devices hold the same turns');

    // Sync goes on while a reply is written (about 12 s: the slow demo reply echoes the long message):
    // the laptop's question reaches the phone, and what the phone writes meanwhile, in a new session,
    // shows on the laptop before its reply is done.
    const slow = `sync e2e: the long answer ${'about the burrow and the bridge. '.repeat(16)}[[fault:slow]]`;
    await send(a, slow);
    const writing = a.locator('.turn[data-role="assistant"] .turn-text[aria-live="off"]', { hasText: 'Demo model here' });
    await writing.waitFor({ timeout: 20_000 });
    await b.locator('.turn[data-role="user"]', { hasText: 'the long answer' }).waitFor({ timeout: 5_000 });
    await b.getByRole('button', { name: '+ New session' }).click();
    const meanwhile = 'sync e2e: written on the phone meanwhile';
    await exchange(b, meanwhile);
    await a.locator('.session', { hasText: meanwhile }).waitFor({ timeout: 5_000 });
    assert.equal(await a.getByRole('button', { name: 'Stop' }).count(), 1, "the laptop's reply was still being written");
    await replyDone(a);
    await b.locator('.session', { hasText: first }).click();
    const whole = b.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'the burrow and the bridge' });
    await whole.filter({ hasText: 'real endpoint for real answers' }).waitFor({ timeout: 10_000 });

    // A device with the wrong passphrase is refused, applies nothing, and keeps its own archive.
    const c = await openPage(stranger.context, app.server.url);
    await ready(c);
    const own = 'sync e2e: a stranger keeps this';
    await send(c, own);
    await replyDone(c);
    await turnOnSync(c, { device: 'Stranger', passphrase: 'not the right passphrase' });
    const status = c.locator('.sync-status.failed');
    await status.waitFor({ timeout: 20_000 });
    assert.match(await status.getAttribute('title'), /passphrase/i, 'the error names the passphrase');
    const ec = await exportArchive(c);
    assert.deepEqual(
      ec.filter((l) => l.type === 'turn' && l.role === 'user').map((t) => t.content),
      [own],
      'nothing of the space was applied and the local archive is whole',
    );

    // The server stores ids, sizes and times only: no sentence typed here is in its files.
    const stored = allBytes(nats.env.NATS_STORE);
    assert.ok(stored.length > 0, 'the server stored the space');
    for (const sentence of [first, second, 'quokka migration', 'wombat rollback']) {
      assert.equal(stored.indexOf(Buffer.from(sentence)), -1, `the server's store holds no "${sentence}"`);
    }
    for (const page of [a, b, c]) assert.deepEqual(page.problems, [], 'no errors in the page');
  } finally {
    await Promise.all([laptop.close(), phone.close(), stranger.close()]);
  }
});

const row = (page, title) => page.locator('.session-row', { hasText: title });

/** Renames the session titled `title` from the sidebar's menu. */
async function rename(page, title, to) {
  await row(page, title).getByRole('button', { name: /^Actions for/ }).click();
  await row(page, title).getByRole('menuitem', { name: 'Rename' }).click();
  const box = page.getByLabel('Session name');
  await box.fill(to);
  await box.press('Enter');
  await row(page, to).waitFor();
}

/** Sends `text` and waits for its reply to be done. */
async function exchange(page, text) {
  await send(page, text);
  await page.locator('.turn[data-role="user"]', { hasText: text }).first().waitFor({ timeout: 20_000 });
  await replyDone(page);
}

test('both devices go offline, write to one session and rename it; back online both keep everything, the same way', async (t) => {
  const laptop = await launchBrowser();
  const phone = await launchBrowser();
  try {
    const a = await openPage(laptop.context, app.server.url);
    await ready(a);
    const first = 'offline merge: plan the release';
    await exchange(a, first);
    await turnOnSync(a, { device: 'Laptop', user: 'bob' });
    const b = await openPage(phone.context, app.server.url);
    await ready(b);
    await turnOnSync(b, { device: 'Phone', user: 'bob' });
    await b.locator('.session', { hasText: first }).click({ timeout: 20_000 });
    await b.locator('.turn[data-role="assistant"]').first().waitFor({ timeout: 20_000 });

    // Both lose the network; each writes to the same session (saved, to be answered later) and renames it.
    let mark = Date.now();
    for (const device of [laptop, phone]) await device.context.setOffline(true);
    for (const page of [a, b]) await page.locator('.sync-status.offline').waitFor({ timeout: 20_000 });
    t.diagnostic(`both said Offline ${Date.now() - mark} ms after the network went`);
    const said = { a: 'offline merge: the laptop says tag it first', b: 'offline merge: the phone says freeze the branch' };
    for (const [page, text] of [[a, said.a], [b, said.b]]) {
      await send(page, text);
      await page.locator('.turn[data-role="user"]', { hasText: text }).waitFor({ timeout: 20_000 });
    }
    await rename(a, first, 'Release plan (laptop)');
    await rename(b, first, 'Release plan (phone)');
    for (const page of [a, b]) {
      await page.locator('.sync-status', { hasText: 'waiting' }).waitFor({ timeout: 10_000 });
    }

    // Back online: every change of both arrives once; both end with the same archive.
    mark = Date.now();
    for (const device of [laptop, phone]) await device.context.setOffline(false);
    const ea = await converged([a, b]);
    t.diagnostic(`both converged ${Date.now() - mark} ms after the network came back`);
    const users = ea.filter((l) => l.type === 'turn' && l.role === 'user').map((t) => t.content);
    for (const text of [first, said.a, said.b]) {
      assert.equal(users.filter((u) => u === text).length, 1, `"${text}" is kept, once`);
    }
    const sessions = ea.filter((l) => l.type === 'session');
    const fork = sessions.find((s) => / \(on (Laptop|Phone)\)$/.test(s.title));
    assert.ok(fork, `the later device's turns continue in a fork titled "… (on <device>)": ${sessions.map((s) => s.title)}`);
    const main = sessions.find((s) => s.parent_session_id === null && s.id === fork.parent_session_id);
    assert.ok(main, 'the fork hangs off the session both wrote to');
    assert.match(main.title, /^Release plan \((laptop|phone)\)$/, 'the rename the server got last wins');
    for (const page of [a, b]) assert.deepEqual(page.problems, [], 'no errors in the page');
  } finally {
    await Promise.all([laptop.close(), phone.close()]);
  }
});

/** What a device's archive holds, as the export says (context manifests aside: each device lists them in
 *  the order it recorded them). */
async function synced(page) {
  return (await exportArchive(page)).filter((l) => l.type !== 'manifest');
}

/** Waits until every page says Synced and they all export the same; resolves to that export. */
async function converged(pages) {
  let exports = [];
  for (let i = 0; i < 60; i++) {
    await pages[0].waitForTimeout(500);
    let all = true;
    for (const page of pages) all &&= (await page.locator('.sync-status', { hasText: /^Synced$/ }).count()) > 0;
    if (!all) continue;
    exports = [];
    for (const page of pages) exports.push(await synced(page));
    if (exports.every((e) => JSON.stringify(e) === JSON.stringify(exports[0]))) return exports[0];
  }
  for (const e of exports.slice(1)) assert.deepEqual(e, exports[0], 'every device exports the same archive');
  assert.fail('the devices did not all say Synced within 30 s');
}

test('a team space shared by two people; wrong credentials and another\'s space are refused; the server killed mid-sync loses and repeats nothing; a third device joins with everything', async (t) => {
  const [laptop, bobs, tablet] = [await launchBrowser(), await launchBrowser(), await launchBrowser()];
  const nats_sh = (cmd) => execFileSync('bash', [join(root, 'scripts/nats.sh'), cmd, nats.dir], { encoding: 'utf8' });
  const file = join(nats.dir, 'team-export.json');
  const [conversations, pairs] = [30, 40];
  writeFileSync(file, JSON.stringify(chatgptExport(conversations, pairs, 'team sync')));
  try {
    // Alice's laptop holds an imported history of 2,400 turns.
    const a = await openPage(laptop.context, app.server.url);
    await ready(a);
    await importFile(a, file, conversations);
    const before = await exportArchive(a);

    // Wrong credentials: a plain error naming them, and nothing changes.
    await turnOnSync(a, { device: 'Laptop', password: 'not-alices-password', space: 'team1' });
    const failed = a.locator('.sync-status.failed');
    await failed.waitFor({ timeout: 20_000 });
    assert.match(await failed.getAttribute('title'), /refused user alice: check the user name and password/, 'the error says what to check');
    assert.deepEqual(await exportArchive(a), before, 'the local archive is untouched');

    // The right ones, for the team's space, with a recovery key made for it: the first sync starts; the
    // server is killed in its middle.
    // (As soon as the header's own record shows an "N waiting": the 2,400 turns go out in packs, within
    // a second or so, and a locator polling the header could miss it between two looks.)
    await watchHeader(a);
    const key = await turnOnSync(a, { device: 'Laptop', space: 'team1', makeKey: true });
    assert.match(key, /^([0-9A-HJKMNP-TV-Z]{4}-){7}[0-9A-HJKMNP-TV-Z]{4}$/, `a recovery key: ${key}`);
    await a.waitForFunction(() => window.sawSync.some((s) => /^ok: [\d,]+ waiting$/.test(s)), null, { timeout: 30_000 });
    const started = Date.now();
    nats_sh('kill');
    await a.locator('.sync-status.offline').waitFor({ timeout: 20_000 });
    t.diagnostic(`killed mid-sync: "${await a.locator('.sync-status').innerText()}"`);
    nats_sh('start');
    await a.locator('.sync-status', { hasText: /^Synced$/ }).waitFor({ timeout: 60_000 });
    t.diagnostic(`laptop's first sync of ${conversations * pairs * 2} turns finished ${Date.now() - started} ms after the kill`);

    // Bob may not open Alice's personal space: refused, nothing applied, his archive his own.
    const b = await openPage(bobs.context, app.server.url);
    await ready(b);
    await exchange(b, 'team sync: bob was here first');
    const bobsOwn = await exportArchive(b);
    await turnOnSync(b, { device: 'Bob', user: 'bob', space: 'alice', passphrase: key });
    await b.locator('.sync-status.failed').waitFor({ timeout: 20_000 });
    assert.match(await b.locator('.sync-status').getAttribute('title'), /alice/, 'the refusal names the space');
    assert.deepEqual(await exportArchive(b), bobsOwn, 'nothing of Alice\'s space reached Bob');

    // The team's space: Bob receives everything Alice published there, and what he writes reaches her.
    await turnOnSync(b, { device: 'Bob', user: 'bob', space: 'team1', passphrase: key });
    await b.locator('.session', { hasText: `team sync archive ${conversations - 1}` }).waitFor({ timeout: 60_000 });
    await exchange(b, 'team sync: bob adds the otter feeding times');
    await a.locator('.session', { hasText: 'team sync: bob was here first' }).click({ timeout: 20_000 });
    await a.locator('.turn[data-role="user"]', { hasText: 'bob adds the otter feeding times' }).waitFor({ timeout: 20_000 });

    // A third device of Alice's joins with the passphrase and receives everything, once.
    const c = await openPage(tablet.context, app.server.url);
    await ready(c);
    // Its first sync shows its progress in the header (watched for, as it may pass quickly).
    await c.evaluate(() => {
      window.sawProgress = [];
      new MutationObserver(() => {
        const bar = document.querySelector('.sync-status progress');
        if (bar) window.sawProgress.push([Number(bar.value), Number(bar.max), bar.parentElement.textContent]);
      }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    });
    // Typed as people do: lower case, spaces for dashes.
    await turnOnSync(c, { device: 'Tablet', space: 'team1', passphrase: key.toLowerCase().replaceAll('-', ' ') });
    const all = await converged([a, b, c]);
    const progress = await c.evaluate(() => window.sawProgress);
    assert.ok(progress.length > 0, 'a progress bar showed while the tablet caught up');
    assert.ok(progress.every(([done, whole]) => done < whole), JSON.stringify(progress.slice(0, 3)));
    assert.match(progress[0][2], /^Receiving · \d+%/, 'and the header said how much was done');
    const users = all.filter((l) => l.type === 'turn' && l.role === 'user').map((l) => l.content);
    const expected = [
      ...Array.from({ length: conversations * pairs }, (_, k) => `team sync ${Math.floor(k / pairs)}.${(k % pairs) * 2}: where does the otter go?`),
      'team sync: bob was here first', 'team sync: bob adds the otter feeding times',
    ];
    assert.deepEqual([...users].sort(), [...expected].sort(), 'every message is on every device, once');
    assert.ok(!JSON.stringify(all).includes('quokka'), 'nothing of Alice\'s personal space is in the team\'s');
    for (const page of [a, b, c]) assert.deepEqual(page.problems, [], 'no errors in the page');
  } finally {
    await Promise.all([laptop.close(), bobs.close(), tablet.close()]);
  }
});

/** A JSON Lines archive of one session in `workspace` with one user turn (core/src/store/jsonl.rs). */
function oneSessionArchive(workspace, text) {
  const id = `${workspace}-session-1`;
  const at = Date.now() - 60_000;
  return [
    { type: 'header', format: 'cowork-archive', version: 1 },
    { type: 'session', id, workspace, title: text, model: 'demo', system_prompt: '', created_at: at, last_active_at: at,
      turn_count: 1, prompt_tokens: 0, completion_tokens: 0, state: {}, parent_session_id: null, fork_turn: null, is_archived: false },
    { type: 'turn', session_id: id, turn_number: 1, role: 'user', content: text, tool_calls: [], tool_call_id: null,
      tool_name: null, token_count: 6, status: 'complete', created_at: at, metadata: {} },
    { type: 'end', sessions: 1, turns: 1 },
  ].map((l) => JSON.stringify(l)).join('\n') + '\n';
}

/** Waits for the header to say Synced; on a timeout the error says what it said instead. */
async function waitSynced(page, timeout = 30_000) {
  try {
    await page.locator('.sync-status', { hasText: /^Synced$/ }).waitFor({ timeout });
  } catch (e) {
    const status = page.locator('.sync-status');
    throw new Error(`not synced after ${timeout} ms: "${await status.innerText()}" (${await status.getAttribute('title')})`, { cause: e });
  }
}

test('a team workspace: its invite code lets a second person in, who gets that workspace and nothing else of the first person\'s', async () => {
  const [alices, bobs] = [await launchBrowser(), await launchBrowser()];
  const file = join(nats.dir, 'acme.jsonl');
  const [draft, mine, bobsOwn] = ['acme team: the roadmap draft', 'acme private: my dentist is on Tuesday', 'acme private: bob\'s shopping list'];
  writeFileSync(file, oneSessionArchive('acme', draft));
  try {
    // Alice: a personal conversation and an imported one in the workspace "acme"; sync on.
    const a = await openPage(alices.context, app.server.url);
    await ready(a);
    await exchange(a, mine);
    await importFile(a, file, 1);
    await turnOnSync(a, { device: 'Alice laptop' }); // her personal space, as the tests above left it
    await waitSynced(a);

    // She creates the team space "acme" (Settings → Sync), which shows its invite code once…
    await a.getByRole('button', { name: 'Settings' }).click();
    await a.getByRole('tab', { name: 'Sync', exact: true }).click();
    const dialog = a.locator('.sync-dialog');
    await dialog.locator('input[name="team-invite"]').fill('acme');
    await dialog.getByRole('button', { name: 'Create' }).click();
    const invite = await dialog.locator('.invite-code code').innerText();
    assert.match(invite, /^cowork-team:acme:([0-9A-HJKMNP-TV-Z]{4}-){7}[0-9A-HJKMNP-TV-Z]{4}$/, invite);
    await dialog.locator('.team-spaces li', { hasText: 'acme' }).waitFor();
    await dialog.getByRole('button', { name: 'Close' }).click();
    // … and moves the workspace there (its settings, from the sidebar).
    await a.getByRole('button', { name: 'Configure workspace acme' }).click();
    const ws = a.locator('.workspace-settings');
    await ws.locator('select.workspace-sync').selectOption({ label: 'Team space acme' });
    await ws.getByRole('button', { name: 'Save workspace' }).click();
    await a.locator('.workspace-saved', { hasText: 'saved' }).waitFor();
    await a.keyboard.press('Escape');
    await ws.waitFor({ state: 'detached' });
    await waitSynced(a);

    // Bob: his own archive and personal space; he joins with the invite code, pasted with a line break.
    const b = await openPage(bobs.context, app.server.url);
    await ready(b);
    await exchange(b, bobsOwn);
    await turnOnSync(b, { device: 'Bob', user: 'bob' }); // his personal space, as the offline test left it
    await waitSynced(b);
    await b.getByRole('button', { name: 'Settings' }).click();
    await b.getByRole('tab', { name: 'Sync', exact: true }).click();
    const bd = b.locator('.sync-dialog');
    await bd.locator('input[name="team-invite"]').fill(`${invite.slice(0, 20)}\n${invite.slice(20)}`);
    await bd.getByRole('button', { name: 'Join' }).click();
    await bd.locator('.team-spaces li', { hasText: 'acme' }).waitFor();
    await bd.getByRole('button', { name: 'Close' }).click();

    // He receives the team's workspace, set to the team's space, and writes in it; Alice sees it.
    await b.locator('.session', { hasText: draft }).click({ timeout: 30_000 });
    await b.getByRole('button', { name: 'Configure workspace acme' }).click();
    assert.equal(await b.locator('select.workspace-sync option:checked').innerText(), 'Team space acme');
    await b.keyboard.press('Escape');
    await b.locator('.workspace-settings').waitFor({ state: 'detached' });
    const reply = 'acme team: bob adds the budget';
    await exchange(b, reply);
    await a.locator('.session', { hasText: draft }).click();
    await a.locator('.turn[data-role="user"]', { hasText: reply }).waitFor({ timeout: 20_000 });
    await waitSynced(a);
    await waitSynced(b);

    // The workspace is the same on both; neither has the other's personal conversations.
    const [ea, eb] = [await exportArchive(a), await exportArchive(b)];
    const acme = (lines) => {
      const ids = new Set(lines.filter((l) => l.type === 'session' && l.workspace === 'acme').map((s) => s.id));
      return lines.filter((l) => l.type === 'turn' && ids.has(l.session_id)).map((t) => `${t.turn_number} ${t.role}: ${t.content}`);
    };
    assert.deepEqual(acme(eb), acme(ea), 'the team workspace holds the same turns on both devices');
    assert.ok(acme(ea).some((t) => t.endsWith(reply)) && acme(ea).some((t) => t.endsWith(draft)));
    const text = (lines) => JSON.stringify(lines);
    assert.ok(!text(eb).includes('dentist'), 'nothing of Alice\'s personal space reached Bob');
    assert.ok(!text(ea).includes('shopping list'), 'nothing of Bob\'s personal space reached Alice');
    assert.equal(ea.find((l) => l.type === 'workspace' && l.workspace === 'acme')?.sync?.team, 'acme');
    const stored = allBytes(nats.env.NATS_STORE);
    for (const sentence of [draft, reply, mine, bobsOwn]) {
      assert.equal(stored.indexOf(Buffer.from(sentence)), -1, `the server's store holds no "${sentence}"`);
    }
    for (const page of [a, b]) assert.deepEqual(page.problems, [], 'no errors in the page');
  } finally {
    await Promise.all([alices.close(), bobs.close()]);
  }
});

// Sync through a three-node NATS JetStream cluster on loopback (scripts/nats-cluster.sh: routes between
// the nodes, the space's stream kept on all three, a WebSocket listener on each), as a team or a hosted
// NATS runs it. Two devices are given the three nodes' URLs; the node leading the space's stream is
// killed (KILL, by its pid) while the first device is still sending its archive: nothing is lost or
// doubled on either device, and the header comes back to Synced by itself, never saying Sync error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, launchBrowser, openPage, ready, replyDone, send, exportArchive, importFile } from '../harness.js';
import { root, script, turnOnSync, waitSynced, chatgptExport, userTurns, assertOnce, watchHeader } from '../sync-support.js';

const { streamCluster } = await import(join(root, 'web/sync/support/provision.mjs'));
const cluster = { dir: mkdtempSync(join(tmpdir(), 'cowork-nats-cluster-')) };
const app = {};

before(async () => {
  // Three nodes on loopback, stopped after (and by themselves after 15 minutes at most).
  cluster.env = script('nats-cluster.sh', ['start', cluster.dir], { COWORK_NATS_SPACES: 'alice' });
  app.server = await startServer();
});

after(async () => {
  await app.server?.stop();
  try {
    script('nats-cluster.sh', ['stop', cluster.dir]);
  } finally {
    rmSync(cluster.dir, { recursive: true, force: true });
  }
});


test('two devices sync through a three-node cluster; its stream leader killed mid-sync loses and doubles nothing, and the header recovers', async (t) => {
  const urls = cluster.env.NATS_WS_URLS.split(',');
  const info = await streamCluster(urls, 'alice');
  assert.equal(info.replicas.length + 1, 3, `the space's stream is kept on three nodes: ${JSON.stringify(info)}`);
  const [laptop, phone] = [await launchBrowser(), await launchBrowser()];
  const file = join(cluster.dir, 'export.json');
  const [conversations, pairs] = [20, 30];
  writeFileSync(file, JSON.stringify(chatgptExport(conversations, pairs, 'cluster')));
  try {
    // The laptop holds 1,200 imported turns; both devices are given every node's URL.
    const a = await openPage(laptop.context, app.server.url);
    await ready(a);
    await importFile(a, file, conversations);
    const b = await openPage(phone.context, app.server.url);
    await ready(b);
    for (const page of [a, b]) await watchHeader(page);
    const server = urls.join(', ');
    // The phone first (it has nothing to send), then the laptop, whose 1,200 turns go out in a few
    // rounds of about a second in all.
    await turnOnSync(b, { server, device: 'Phone' });
    await turnOnSync(a, { server, device: 'Laptop' });

    // Mid-sync (the laptop still sending), the node leading the stream is killed: as soon as the
    // header's own record (every state it showed, `watchHeader`) has an "N waiting", which a locator
    // polling the header could miss between two of its looks.
    await a.waitForFunction(() => window.sawSync.some((s) => /^ok: [\d,]+ waiting$/.test(s)), null, { timeout: 30_000 }).catch(async (e) => {
      // Say what the header went through instead, so a failure here says why.
      throw new Error(`the laptop never said "N waiting"; its header said ${JSON.stringify(await a.evaluate(() => window.sawSync))}: ${e.message}`);
    });
    // The leader as the cluster named it before sync started (asked again here, it could be too late).
    const { leader } = info;
    const node = leader?.match(/^cowork-([123])$/)?.[1];
    assert.ok(node, `the server names the stream's leader: ${leader}`);
    const waiting = await a.locator('.sync-status').innerText();
    process.kill(Number(cluster.env[`NATS_PID_${node}`]), 'SIGKILL');
    const killed = Date.now();
    t.diagnostic(`killed ${leader} (pid ${cluster.env[`NATS_PID_${node}`]}) while the laptop said "${waiting}"`);

    // Writing goes on meanwhile: an exchange on the laptop reaches the phone.
    const live = 'cluster e2e: written while the cluster chose a new leader';
    await send(a, live);
    await a.locator('.turn[data-role="user"]', { hasText: live }).waitFor({ timeout: 20_000 });
    await replyDone(a);

    // Both come back to Synced by themselves, with the same archive.
    await waitSynced(a, 120_000);
    await waitSynced(b, 120_000);
    t.diagnostic(`both said Synced ${Date.now() - killed} ms after the kill`);
    let ea, eb;
    for (let i = 0; i < 60; i++) {
      [ea, eb] = [await exportArchive(a), await exportArchive(b)];
      const turns = (lines) => JSON.stringify(lines.filter((l) => l.type === 'turn' || l.type === 'session'));
      if (turns(ea) === turns(eb)) break;
      await a.waitForTimeout(500);
    }
    const expected = [
      ...Array.from({ length: conversations * pairs }, (_, k) => `cluster ${Math.floor(k / pairs)}.${(k % pairs) * 2}: where does the otter go?`),
      live,
    ];
    assertOnce(userTurns(ea), expected, 'the laptop');
    assertOnce(userTurns(eb), expected, 'the phone');
    const turns = (lines) => lines.filter((l) => l.type === 'turn').map((l) => `${l.role}:${l.content}`).sort();
    assert.deepEqual(turns(eb), turns(ea), 'both devices hold the same turns, replies too');
    assert.equal(turns(ea).length, conversations * pairs * 2 + 2);

    // The stream has a new leader among the two nodes left, and the header never gave up.
    const after = await streamCluster(urls.filter((_, i) => String(i + 1) !== node), 'alice');
    assert.ok(after.leader && after.leader !== leader, `a new leader: ${after.leader}`);
    for (const [name, page] of [['laptop', a], ['phone', b]]) {
      const seen = await page.evaluate(() => window.sawSync);
      t.diagnostic(`${name}'s header: ${seen.slice(0, 12).join(' → ')}${seen.length > 12 ? ' …' : ''}`);
      assert.ok(!seen.some((s) => s.startsWith('failed')), `the ${name}'s header never said Sync error: ${seen.join(' → ')}`);
    }
    for (const page of [a, b]) assert.deepEqual(page.problems, [], 'no errors in the page');
  } finally {
    await Promise.all([laptop.close(), phone.close()]);
  }
});

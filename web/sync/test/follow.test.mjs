// Following a space by push (space.follow): what another device publishes is held for the archive within
// moments, in stream order, each once, from the cursor given; a chunked change arrives whole; a message
// missing from the stream (a gap), a reconnection or a stop ends following and says why.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CAROL, changes, startServer, until } from '../support/server.mjs';
import { connect, openSpace } from '../index.mjs';

const PASSPHRASE = 'follow by push passphrase';

/** Takes from `follower` until `n` changes came (waiting for each arrival); the takes, in order. */
async function takeAll(follower, n, ms = 5000) {
  const takes = [];
  const end = Date.now() + ms;
  while (takes.flatMap((t) => t.messages).length < n) {
    assert.ok(Date.now() < end, `only ${takes.flatMap((t) => t.messages).length} of ${n} changes arrived within ${ms} ms`);
    await follower.wait(200);
    const taken = follower.take();
    assert.ok(taken, `the follower broke: ${JSON.stringify(follower.broken)}`);
    if (taken.messages.length || taken.after !== taken.lastSeq) takes.push(taken);
  }
  return takes;
}

describe('following a space by push', { timeout: 90_000 }, () => {
  let server;
  let laptop;
  let phone;
  let onLaptop;
  let onPhone;

  before(async () => {
    // Small messages, so a long body goes as chunks.
    server = startServer({ maxPayload: 8192 });
    laptop = await connect({ url: server.wsUrl, ...CAROL, name: 'laptop' });
    phone = await connect({ url: server.wsUrl, ...CAROL, name: 'phone' });
    onLaptop = await openSpace(laptop, { space: 'follow', passphrase: PASSPHRASE, create: true });
    onPhone = await openSpace(phone, { space: 'follow', passphrase: PASSPHRASE });
  });
  after(async () => {
    await Promise.allSettled([laptop?.close(), phone?.close()]);
    server?.stop();
  });

  test('what is published arrives in stream order, each once, the takes continuing one another', async () => {
    // One stream message a change (packs are followed below).
    assert.equal(await onLaptop.publish(changes('laptop', 0, 3), { pack: 1 }), 3);
    const follower = onPhone.follow(0);
    try {
      const backlog = await takeAll(follower, 3);
      // A change longer than a message goes as chunks and is held once, whole, at its last chunk.
      const long = { id: 'laptop:long', subject: 'turn.long', body: 'x'.repeat(20_000) };
      assert.equal(await onLaptop.publish([...changes('laptop', 3, 5), long, ...changes('laptop', 5, 6)], { pack: 1 }), 4);
      const live = await takeAll(follower, 4);
      const takes = [...backlog, ...live];
      const messages = takes.flatMap((t) => t.messages);
      assert.deepEqual(messages.map((m) => m.id), ['laptop:0', 'laptop:1', 'laptop:2', 'laptop:3', 'laptop:4', 'laptop:long', 'laptop:5']);
      assert.equal(messages[5].body, long.body);
      assert.deepEqual(messages[3].body, changes('laptop', 3, 4)[0].body);
      for (let i = 1; i < messages.length; i++) assert.ok(messages[i].seq > messages[i - 1].seq, 'in stream order');
      assert.equal(takes[0].after, 0, 'the first take continues from the cursor given');
      for (let i = 1; i < takes.length; i++) assert.equal(takes[i].after, takes[i - 1].lastSeq, 'each take continues the one before');
      const { lastSeq } = await onPhone.fetch(0, 1000);
      assert.equal(takes.at(-1).lastSeq, lastSeq, 'read to where a fetch reads to');
      assert.equal(takes.at(-1).streamLast, lastSeq);
      assert.equal(follower.broken, null);
    } finally {
      await follower.stop();
    }
  });

  test('following from a cursor holds only what came after it, as fetch reads it', async () => {
    const { messages: all } = await onPhone.fetch(0, 1000);
    const cursor = all[2].seq;
    const follower = onPhone.follow(cursor);
    try {
      const takes = await takeAll(follower, all.length - 3);
      const held = takes.flatMap((t) => t.messages);
      assert.deepEqual(held.map((m) => [m.seq, m.id, m.body]), all.slice(3).map((m) => [m.seq, m.id, m.body]));
      // Nothing more is held (no copy of what was taken).
      assert.equal(await follower.wait(300), false);
      assert.deepEqual(follower.take().messages, []);
    } finally {
      await follower.stop();
    }
  });

  test('a message missing from the stream is a gap: following stops and says so, and fetch reads on', async () => {
    // A stream that, unlike a space's, allows deleting: a deleted message is the gap a lost delivery would be.
    const jsm = await laptop.manager();
    await jsm.streams.add({ name: 'cowork_gaps', subjects: ['cowork.gaps.>'], storage: 'file', num_replicas: 1 });
    const writer = await openSpace(laptop, { space: 'gaps', passphrase: PASSPHRASE, create: true });
    const reader = await openSpace(phone, { space: 'gaps', passphrase: PASSPHRASE });
    assert.equal(await writer.publish(changes('laptop', 0, 4), { pack: 1 }), 4);
    const { messages } = await reader.fetch(0, 100);
    await jsm.streams.deleteMessage('cowork_gaps', messages[2].seq);
    const follower = reader.follow(0);
    try {
      await until(() => follower.broken, 5000, 'the follower to see the gap');
      assert.equal(follower.broken.kind, 'gap');
      assert.match(follower.broken.message, new RegExp(`from sequence ${messages[1].seq} to ${messages[3].seq}`));
      assert.equal(follower.take(), null, 'nothing is handed over past a gap');
      const read = await reader.fetch(messages[1].seq, 100);
      assert.deepEqual(read.messages.map((m) => m.id), ['laptop:3'], 'the fallback reads on from the cursor');
    } finally {
      await follower.stop();
      await writer.close();
      await reader.close();
    }
  });

  test('a dropped connection ends following (what was on its way is read again from the cursor)', async () => {
    const { lastSeq } = await onPhone.fetch(0, 1000);
    const follower = onPhone.follow(lastSeq);
    try {
      await follower.wait(100);
      server.kill();
      await until(() => follower.broken, 10_000, 'the follower to see the connection go');
      assert.equal(follower.broken.kind, 'reconnect');
      assert.equal(follower.take(), null);
    } finally {
      await follower.stop();
      server.start();
      await until(() => phone.status === 'online' && laptop.status === 'online', 15_000, 'both devices to reconnect');
    }
    // Followed again after reading from the cursor, new messages arrive by push once more.
    const again = onPhone.follow((await onPhone.fetch(0, 1000)).lastSeq);
    try {
      assert.equal(await onLaptop.publish(changes('laptop', 10, 11)), 1);
      const [take] = await takeAll(again, 1, 10_000);
      assert.deepEqual(take.messages.map((m) => m.id), ['laptop:10']);
    } finally {
      await again.stop();
    }
  });

  test('closing the space stops its followers', async () => {
    const space = await openSpace(phone, { space: 'follow', passphrase: PASSPHRASE });
    const follower = space.follow(0);
    await follower.wait(1000);
    await space.close();
    const before = follower.take()?.lastSeq;
    assert.equal(await onLaptop.publish(changes('laptop', 20, 21)), 1);
    assert.equal(await follower.wait(300), false, 'nothing arrives once stopped');
    assert.equal(follower.take()?.lastSeq, before);
  });
});

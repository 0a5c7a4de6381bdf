// Packs (pack.mjs): a backlog goes as few stream messages, each sealing many changes, against a real
// nats-server on loopback. Read back in order, each change once, never cut between two reads or takes;
// published again, dropped as duplicates; a change set aside from a pack opens again alone; the server
// sees neither the changes' ids nor their subjects.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CAROL, changes, filesUnder, startServer, until } from '../support/server.mjs';
import { headers } from '@nats-io/nats-core';
import { connect, openSpace } from '../index.mjs';

const PASSPHRASE = 'packed together passphrase';

describe('packs', { timeout: 60_000 }, () => {
  let server;
  let laptop;
  let phone;
  let space;
  let onPhone;
  const backlog = changes('laptop', 0, 300);

  before(async () => {
    server = startServer();
    laptop = await connect({ url: server.wsUrl, ...CAROL, name: 'laptop' });
    phone = await connect({ url: server.wsUrl, ...CAROL, name: 'phone' });
    space = await openSpace(laptop, { space: 'packs', passphrase: PASSPHRASE, create: true });
    onPhone = await openSpace(phone, { space: 'packs', passphrase: PASSPHRASE });
  });
  after(async () => {
    await Promise.allSettled([laptop?.close(), phone?.close()]);
    server?.stop();
  });

  const stored = async () => (await (await laptop.manager()).streams.info('cowork_packs')).state.messages;

  test('a backlog of 300 changes is 3 stream messages, read back in order, each change once', async () => {
    assert.equal(await space.publish(backlog), 300);
    assert.equal(await stored(), 1 + 3, 'the set-up and packs of 128, 128 and 44');
    const { messages, lastSeq, streamLast } = await onPhone.fetch(0, 1000);
    assert.deepEqual(messages.map(({ id, body }) => ({ id, body })), backlog.map(({ id, body }) => ({ id, body })));
    const seqs = [...new Set(messages.map((m) => m.seq))];
    assert.deepEqual(seqs, [2, 3, 4], 'every change has its pack\'s stream sequence');
    assert.deepEqual(seqs.map((s) => messages.filter((m) => m.seq === s).length), [128, 128, 44]);
    assert.deepEqual([lastSeq, streamLast], [4, 4]);
  });

  test('the same list published again adds nothing: the same packs, dropped as duplicates', async () => {
    assert.equal(await space.publish(backlog), 300);
    assert.equal(await space.publish(backlog.slice(128)), 172, 'from a pack\'s start, as the outbox publishes again');
    assert.equal(await stored(), 4);
  });

  test('a read is never cut inside a pack: it ends with the pack `max` ends in', async () => {
    const first = await onPhone.fetch(0, 10);
    assert.equal(first.messages.length, 128);
    assert.equal(first.lastSeq, 2);
    const second = await onPhone.fetch(first.lastSeq, 1, 100);
    assert.deepEqual(second.messages.map((m) => m.id), backlog.slice(128, 256).map((m) => m.id), 'and `maxBytes` too');
  });

  test('a follower hands over whole packs', async () => {
    const follower = onPhone.follow(2);
    try {
      let taken = null;
      await until(async () => {
        await follower.wait(100);
        taken = follower.take(10);
        return taken?.messages.length;
      }, 5000, 'the second pack');
      assert.equal(taken.messages.length, 128, 'take(10) ends with the pack it ends in');
      assert.deepEqual(taken.messages.map((m) => m.id), backlog.slice(128, 256).map((m) => m.id));
      assert.deepEqual([taken.after, taken.lastSeq], [2, 3]);
    } finally {
      await follower.stop();
    }
  });

  test('a change set aside from a pack opens again alone, from what the archive kept', async () => {
    const { messages } = await onPhone.fetch(2, 1);
    const change = messages[5];
    const kept = new Uint8Array(change.sealed); // what the archive stores for a change it sets aside
    assert.equal(await onPhone.unseal(change.id, kept), change.body);
    await assert.rejects(onPhone.unseal('laptop:999', kept), { kind: 'invalid', message: /not in the pack/ });
  });

  test('packs are cut by size as well as by count', async () => {
    const before = await stored();
    const big = changes('big', 0, 40).map((m) => ({ ...m, body: JSON.stringify({ text: m.id, pad: 'p'.repeat(20_000) }) }));
    assert.equal(await space.publish(big), 40);
    const added = (await stored()) - before;
    assert.ok(added >= 4 && added <= 6, `40 changes of 20 KB went as ${added} stream messages (256 KB a pack at most)`);
    const { messages } = await onPhone.fetch(4, 1000);
    assert.deepEqual(messages.map((m) => m.id), big.map((m) => m.id));
  });

  test('a pack that cannot be opened is one message with what is wrong, and the rest reads on', async () => {
    const start = (await onPhone.fetch(0, 10_000)).lastSeq;
    const jsm = await laptop.manager();
    // A pack's bytes published again under another id: sealed to its own id, they do not open.
    const copy = await jsm.streams.getMessage('cowork_packs', { seq: 2 });
    const h = headers();
    h.set('Cowork-Pack', '128');
    await laptop.js.publish('cowork.packs._pack', copy.data, { msgID: 'forged:1+128', headers: h });
    assert.equal(await space.publish(changes('after', 0, 2)), 2);
    const { messages } = await onPhone.fetch(start, 1000);
    assert.deepEqual(messages.map((m) => m.id), ['forged:1+128', 'after:0', 'after:1']);
    assert.match(messages[0].error, /cannot be decrypted as a pack/);
  });

  test("the server's disk holds the packs' ids, but not the changes' ids, subjects or text", async () => {
    const all = Buffer.concat(filesUnder(server.store).map(([, bytes]) => bytes));
    assert.ok(all.includes('laptop:0+128\r\n') && all.includes('cowork.packs._pack'), 'the store holds the packs\' ids');
    for (const { id, subject, body } of backlog.slice(1, 128)) {
      assert.ok(!all.includes(`${id}\r\n`) && !all.includes(`cowork.packs.${subject}`), `${id} is on the server's disk`);
      assert.ok(!all.includes(JSON.parse(body).text));
    }
  });
});

// Changes larger than the server's max_payload (64 KB here) go as chunks and come back whole.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { CAROL, changes, filesUnder, startServer } from '../support/server.mjs';
import { connect, openSpace } from '../index.mjs';

const MAX_PAYLOAD = 64 * 1024;

// About 300 KB of JSON with multi-byte characters, so chunk boundaries fall inside them.
function largeBody(label) {
  const text = `${label} ✓ naïve 数据 🚀 ${randomBytes(160_000).toString('base64')}`;
  return JSON.stringify({ label, text, more: 'é'.repeat(40_000) });
}

describe('a change larger than max_payload', { timeout: 60_000 }, () => {
  let server;
  let connection;
  let space;

  before(async () => {
    server = startServer({ maxPayload: MAX_PAYLOAD });
    connection = await connect({ url: server.wsUrl, ...CAROL });
    space = await openSpace(connection, { space: 'carol', passphrase: 'a long enough passphrase', create: true });
  });
  after(async () => {
    await Promise.allSettled([connection?.close()]);
    server?.stop();
  });

  const info = async () => (await (await connection.manager()).streams.info('cowork_carol')).state;

  test('round-trips byte for byte, between small ones, in order', async () => {
    const body = largeBody('first');
    assert.ok(Buffer.byteLength(body) > 4 * MAX_PAYLOAD, `${Buffer.byteLength(body)} bytes`);
    const sent = [...changes('d', 0, 2), { id: 'd:big', subject: 'turn.big', body }, ...changes('d', 2, 4)];
    assert.equal(await space.publish(sent), 5);
    const { messages } = await space.fetch(0, 100);
    assert.deepEqual(messages.map((m) => m.id), sent.map((m) => m.id));
    assert.equal(messages[2].body, body);
    const stored = (await info()).messages;
    assert.ok(stored >= 1 + 2 + 5, `${stored} stream messages: the set-up, a pack on each side and at least 5 chunks`);
    // The small ones on each side went together, as a pack; the large one alone, in chunks, and its
    // sequence is its last chunk's: the pack after it follows it directly.
    assert.equal(messages[0].seq, messages[1].seq);
    assert.equal(messages[3].seq, messages[4].seq);
    assert.equal(messages[3].seq, messages[2].seq + 1);
  });

  test('a read that starts after its first chunks still gets it whole', async () => {
    const { messages } = await space.fetch(0, 100);
    const big = messages.find((m) => m.id === 'd:big');
    const fromInside = await space.fetch(big.seq - 1, 1);
    assert.deepEqual(fromInside.messages.map((m) => [m.id, m.seq]), [['d:big', big.seq]]);
    assert.equal(fromInside.messages[0].body, big.body);
    assert.equal(fromInside.lastSeq, big.seq);
  });

  test('publishing it again adds nothing', async () => {
    const before = (await info()).messages;
    const { messages } = await space.fetch(0, 100);
    const again = messages.map(({ id, body }) => ({ id, subject: id === 'd:big' ? 'turn.big' : `turn.d-${id.slice(2)}`, body }));
    assert.equal(await space.publish(again), 5);
    assert.equal((await info()).messages, before);
  });

  test('one cut off after some of its chunks is completed by publishing it again', async () => {
    const message = { id: 'd:cut', subject: 'turn.cut', body: largeBody('cut') };
    const before = await info();
    // The connection fails on the third chunk's publish, as a timeout would.
    const { js } = connection;
    const publish = js.publish;
    let calls = 0;
    js.publish = function (...args) {
      if (++calls === 3) return Promise.reject(Object.assign(new Error('timeout'), { name: 'TimeoutError' }));
      return publish.apply(this, args);
    };
    try {
      assert.equal(await space.publish([message]), 0, 'not acknowledged');
    } finally {
      js.publish = publish;
    }
    assert.equal((await info()).messages, before.messages + 2, 'two chunks stored');
    assert.equal((await space.fetch(before.last_seq, 10)).messages.length, 0, 'nothing to read yet');
    assert.equal(await space.publish([message]), 1);
    const after = await info();
    // Each chunk is in the stream once, in order: the first two were not stored again.
    const jsm = await connection.manager();
    const chunks = [];
    for (let seq = before.last_seq + 1; seq <= after.last_seq; seq++) {
      chunks.push((await jsm.streams.getMessage('cowork_carol', { seq })).header.get('Cowork-Chunk'));
    }
    assert.ok(chunks.length >= 5, `${chunks.length} chunks`);
    assert.deepEqual(chunks, chunks.map((_, i) => `${i + 1}/${chunks.length}`));
    const { messages } = await space.fetch(before.last_seq, 10);
    assert.deepEqual(messages.map((m) => [m.id, m.seq]), [['d:cut', after.last_seq]]);
    assert.equal(messages[0].body, message.body);
    // A reader that starts between the two stored chunks gets the first from the server.
    const fromInside = await space.fetch(before.last_seq + 1, 10);
    assert.equal(fromInside.messages[0]?.body, message.body);
  });

  test('a second device watching gets it whole', async () => {
    const other = await connect({ url: server.wsUrl, ...CAROL });
    try {
      const there = await openSpace(other, { space: 'carol', passphrase: 'a long enough passphrase' });
      const last = (await info()).last_seq;
      const seen = [];
      const stop = there.watch(last, (batch) => seen.push(...batch));
      const body = largeBody('second');
      assert.equal(await space.publish([{ id: 'd:big2', subject: 'turn.big2', body }]), 1);
      const until = Date.now() + 5000;
      while (!seen.length && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      await stop();
      assert.deepEqual(seen.map((m) => m.id), ['d:big2']);
      assert.equal(seen[0].body, body);
    } finally {
      await other.close();
    }
  });

  test("the server's disk holds none of it in the clear", async () => {
    const all = Buffer.concat(filesUnder(server.store).map(([, bytes]) => bytes));
    assert.ok(all.includes('d:big2#1'), 'the store holds the chunk ids');
    assert.ok(!all.includes('é'.repeat(100)));
    assert.ok(!all.includes('naïve 数据'));
  });
});

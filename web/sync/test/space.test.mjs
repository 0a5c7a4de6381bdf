// Publishing, reading back, de-duplication, a second device, keys and errors, against a real
// nats-server on loopback; and what the server's disk holds afterwards.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CAROL, changes, filesUnder, startServer } from '../support/server.mjs';
import { SyncError, connect, newRecoveryKey, openSpace } from '../index.mjs';

const PASSPHRASE = 'correct horse battery staple';

describe('a personal space', { timeout: 60_000 }, () => {
  let server;
  let laptop;
  let space;
  const published = changes('laptop', 0, 200);

  before(async () => {
    server = startServer();
    laptop = await connect({ url: server.wsUrl, ...CAROL, name: 'laptop' });
    space = await openSpace(laptop, { space: 'carol', passphrase: PASSPHRASE, create: true });
  });
  after(async () => {
    await Promise.allSettled([laptop?.close()]);
    server?.stop();
  });

  const streamMessages = async () => (await (await laptop.manager()).streams.info('cowork_carol')).state.messages;

  // One stream message a change, as live sync sends them (packs: pack.test.mjs).
  test('publishes 200 messages and reads them back in order, decrypted', async () => {
    assert.equal(await space.publish(published, { pack: 1 }), 200);
    const { messages, lastSeq } = await space.fetch(0, 1000);
    assert.deepEqual(
      messages.map(({ id, body }) => ({ id, body })),
      published.map(({ id, body }) => ({ id, body })),
    );
    const seqs = messages.map((m) => m.seq);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b), 'stream order');
    assert.equal(lastSeq, seqs.at(-1));
  });

  test('publishing the same ids again adds nothing to the stream', async () => {
    const before = await streamMessages();
    assert.equal(before, 201, 'the 200 changes and the space set-up message');
    assert.equal(await space.publish(published, { pack: 1 }), 200, 'duplicates count as acknowledged');
    assert.equal(await space.publish(published.slice(50, 60), { pack: 1 }), 10);
    assert.equal(await streamMessages(), before);
    assert.equal((await space.fetch(0, 1000)).messages.length, 200);
  });

  test('reads from a cursor in the middle, at most `max` at a time, and returns at once when there is nothing new', async () => {
    const all = (await space.fetch(0, 1000)).messages;
    const middle = all[99].seq;
    const page = await space.fetch(middle, 30);
    assert.deepEqual(page.messages.map((m) => m.id), published.slice(100, 130).map((m) => m.id));
    assert.equal(page.lastSeq, all[129].seq);
    assert.equal(page.streamLast, all.at(-1).seq, 'how far the stream goes (a first sync\'s progress)');
    const rest = await space.fetch(page.lastSeq, 1000);
    assert.deepEqual(rest.messages.map((m) => m.id), published.slice(130).map((m) => m.id));
    const started = Date.now();
    const nothing = await space.fetch(rest.lastSeq, 1000);
    assert.deepEqual(nothing, { messages: [], lastSeq: rest.lastSeq, streamLast: rest.lastSeq });
    assert.ok(Date.now() - started < 1000, `an empty fetch took ${Date.now() - started} ms`);
  });

  test('a read ends once `maxBytes` are in, and the next goes on from there: every message once', async () => {
    const all = (await space.fetch(0, 1000)).messages;
    const got = [];
    let after = 0;
    for (let reads = 0; reads < 500; reads++) {
      const page = await space.fetch(after, 1000, 300);
      if (!page.messages.length) break;
      assert.ok(page.messages.length <= 4, `a read of 300 bytes brought ${page.messages.length} messages`);
      got.push(...page.messages.map((m) => m.id));
      after = page.lastSeq;
    }
    assert.deepEqual(got, all.map((m) => m.id));
  });

  test('a second device with the same passphrase reads everything', async () => {
    const phone = await connect({ url: server.wsUrl, ...CAROL, name: 'phone' });
    try {
      const onPhone = await openSpace(phone, { space: 'carol', passphrase: PASSPHRASE });
      const { messages } = await onPhone.fetch(0, 1000);
      assert.deepEqual(messages.map((m) => m.body), published.map((m) => m.body));
      // … and what it publishes, the first device reads after its own.
      assert.equal(await onPhone.publish(changes('phone', 0, 3), { pack: 1 }), 3);
      const { messages: mine } = await space.fetch(messages.at(-1).seq, 1000);
      assert.deepEqual(mine.map((m) => m.id), ['phone:0', 'phone:1', 'phone:2']);
    } finally {
      await phone.close();
    }
  });

  test('a wrong passphrase is refused when the space is opened, before any message can be read', async () => {
    const stranger = await connect({ url: server.wsUrl, ...CAROL });
    try {
      await assert.rejects(openSpace(stranger, { space: 'carol', passphrase: 'correct horse battery stapler' }), (err) => {
        assert.ok(err instanceof SyncError);
        assert.equal(err.kind, 'passphrase');
        assert.match(err.message, /does not open space "carol"/);
        return true;
      });
      // Creating does not overwrite the existing key set-up either.
      await assert.rejects(openSpace(stranger, { space: 'carol', passphrase: 'another passphrase', create: true }), { kind: 'passphrase' });
    } finally {
      await stranger.close();
    }
  });

  test('a recovery key opens a space, however it is typed', async () => {
    const key = newRecoveryKey();
    assert.match(key, /^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){7}$/, '160 bits in 8 groups of base32');
    assert.notEqual(key, newRecoveryKey());
    const created = await openSpace(laptop, { space: 'carol_keyed', passphrase: key, create: true });
    assert.equal(await created.publish(changes('laptop', 0, 1)), 1);
    const typed = key.toLowerCase().replaceAll('-', ' ').replaceAll('0', 'o');
    const reopened = await openSpace(laptop, { space: 'carol_keyed', passphrase: typed });
    assert.equal((await reopened.fetch(0, 10)).messages[0].id, 'laptop:0');
    await assert.rejects(openSpace(laptop, { space: 'carol_keyed', passphrase: newRecoveryKey() }), { kind: 'passphrase' });
  });

  test('two devices setting up a new space at the same moment end up with one key', async () => {
    const phone = await connect({ url: server.wsUrl, ...CAROL, name: 'phone' });
    try {
      const [first, second] = await Promise.allSettled([
        openSpace(laptop, { space: 'carol_race', passphrase: 'the laptop passphrase', create: true }),
        openSpace(phone, { space: 'carol_race', passphrase: 'the phone passphrase', create: true }),
      ]);
      const outcomes = [first, second].map((r) => r.status === 'fulfilled' ? 'opened' : r.reason.kind).sort();
      assert.deepEqual(outcomes, ['opened', 'passphrase'], 'the device that lost the race is told its passphrase does not open the space');
      const winner = first.status === 'fulfilled' ? 'the laptop passphrase' : 'the phone passphrase';
      assert.ok(await openSpace(phone, { space: 'carol_race', passphrase: winner }));
    } finally {
      await phone.close();
    }
  });

  test('wrong credentials, a server that is not there and bad arguments say so', async () => {
    await assert.rejects(connect({ url: server.wsUrl, user: 'carol', pass: 'guess' }), {
      kind: 'auth',
      message: 'The sync server refused user carol: check the user name and password.',
    });
    await assert.rejects(connect({ url: 'ws://127.0.0.1:9', ...CAROL }), { kind: 'unreachable' });
    await assert.rejects(connect({ url: 'https://example.com', ...CAROL }), { kind: 'invalid' });
    await assert.rejects(openSpace(laptop, { space: 'Alice!', passphrase: PASSPHRASE }), { kind: 'invalid' });
    await assert.rejects(openSpace(laptop, { space: 'carol', passphrase: '' }), { kind: 'invalid' });
    await assert.rejects(space.publish([{ id: 'x:1', subject: 'turn.*', body: '{}' }]), { kind: 'invalid' });
    await assert.rejects(space.publish([{ id: 'x\n1', subject: 'turn.a', body: '{}' }]), { kind: 'invalid' });
    await assert.rejects(space.publish([{ id: 'x:1', subject: '_meta', body: '{}' }]), { kind: 'invalid' });
    await assert.rejects(space.fetch(-1, 10), { kind: 'invalid' });
  });

  test("the server's disk holds none of the plaintext", async () => {
    const files = filesUnder(server.store);
    const all = Buffer.concat(files.map(([, bytes]) => bytes));
    // The search does see what the server stores in the clear: message ids (headers) and subjects.
    assert.ok(all.includes('laptop:123'), 'the store holds the message ids');
    assert.ok(all.includes('cowork.carol.turn.laptop-123'), 'the store holds the subjects');
    assert.ok(all.includes('phone:2'), 'the store holds the last message published');
    for (const { body } of [...published, ...changes('phone', 0, 3)]) {
      const sentence = JSON.parse(body).text;
      assert.ok(!all.includes(sentence), `"${sentence}" is on the server's disk`);
    }
    assert.ok(!all.includes(PASSPHRASE));
  });
  test('a message that cannot be opened comes with what is wrong and its bytes, and the rest reads on', async () => {
    const start = (await space.fetch(0, 1000)).lastSeq;
    assert.equal(await space.publish(changes('birch', 0, 1)), 1);
    // Bytes no device sealed with this space's key (another key, or altered on the way).
    await laptop.js.publish('cowork.carol.turn.forged', new Uint8Array(64).fill(7), { msgID: 'forged:1' });
    assert.equal(await space.publish(changes('birch', 1, 2)), 1);
    const { messages } = await space.fetch(start, 1000);
    assert.deepEqual(messages.map((m) => m.id), ['birch:0', 'forged:1', 'birch:1'], 'nothing stops at the forged one');
    const [good, forged, next] = messages;
    assert.equal(forged.body, undefined);
    assert.match(forged.error, /cannot be decrypted: it was altered, or written with another key/);
    assert.deepEqual([...forged.sealed.subarray(4)], new Array(64).fill(7), 'kept as the stream holds it');
    assert.equal(next.body, changes('birch', 1, 2)[0].body);
    // What was kept opens again later with the space's key; the forged one still does not.
    assert.equal(await space.unseal(good.id, good.sealed), good.body);
    await assert.rejects(space.unseal(forged.id, forged.sealed), { kind: 'invalid' });
  });
});

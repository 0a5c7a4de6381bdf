// Live updates between devices, and a server that crashes and comes back between two publishes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CAROL, changes, startServer, until } from '../support/server.mjs';
import { connect, openSpace } from '../index.mjs';

const PASSPHRASE = 'live updates passphrase';

describe('live updates and reconnection', { timeout: 90_000 }, () => {
  let server;
  let laptop;
  let phone;
  let onLaptop;
  let onPhone;
  const statuses = [];

  before(async () => {
    server = startServer();
    laptop = await connect({ url: server.wsUrl, ...CAROL, name: 'laptop' });
    phone = await connect({ url: server.wsUrl, ...CAROL, name: 'phone' });
    laptop.onStatus(({ status }) => statuses.push(status));
    onLaptop = await openSpace(laptop, { space: 'carol', passphrase: PASSPHRASE, create: true });
    onPhone = await openSpace(phone, { space: 'carol', passphrase: PASSPHRASE });
  });
  after(async () => {
    await Promise.allSettled([laptop?.close(), phone?.close()]);
    server?.stop();
  });

  test('watch delivers what another device publishes within 2 s, after the backlog', async () => {
    assert.equal(await onLaptop.publish(changes('laptop', 0, 3)), 3);
    const batches = [];
    const stop = onPhone.watch(0, (batch) => batches.push(batch));
    try {
      await until(() => batches.flat().length === 3, 5000, 'the backlog');
      const sent = Date.now();
      assert.equal(await onLaptop.publish(changes('laptop', 3, 4)), 1);
      await until(() => batches.flat().length === 4, 2000, 'the new message on the other device');
      const latency = Date.now() - sent;
      assert.ok(latency < 2000, `${latency} ms`);
      assert.deepEqual(batches.flat().map((m) => m.id), ['laptop:0', 'laptop:1', 'laptop:2', 'laptop:3']);
      assert.equal(batches.flat()[3].body, changes('laptop', 3, 4)[0].body);
    } finally {
      await stop();
    }
    // Stopped means stopped.
    assert.equal(await onLaptop.publish(changes('laptop', 4, 5)), 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(batches.flat().length, 4);
  });

  test('a server killed while a long publish is under way: what it kept is in order, and publishing again completes it', async (t) => {
    const start = (await onLaptop.fetch(0, 100_000)).lastSeq;
    const outbox = changes('laptop', 1000, 6000);
    const stored = async () => (await (await phone.manager()).streams.info('cowork_carol')).state.last_seq;
    // Small packs, so that the crash falls among hundreds of stream messages.
    const publishing = onLaptop.publish(outbox, { pack: 8 });
    await until(async () => (await stored()) >= start + 25, 10_000, 'the publish to be under way');
    server.kill();
    const started = Date.now();
    const acknowledged = await publishing;
    t.diagnostic(`${acknowledged} of ${outbox.length} acknowledged before the crash; publish returned ${Date.now() - started} ms after it`);
    assert.ok(acknowledged < outbox.length, 'the crash cut the publish short');
    server.start();
    await until(() => laptop.status === 'online' && phone.status === 'online', 15_000, 'both devices to reconnect');
    // The same list packs the same way: what the server kept is dropped as a duplicate.
    assert.equal(await onLaptop.publish(outbox, { pack: 8 }), outbox.length);
    const { messages } = await onPhone.fetch(start, 100_000);
    assert.deepEqual(messages.map((m) => m.id), outbox.map((m) => m.id), 'each once, in order');
  });

  test('a server killed and restarted between two publishes: offline, back, no duplicates, no loss', async () => {
    const seen = [];
    const errors = [];
    const start = (await onPhone.fetch(0, 100_000)).lastSeq;
    const stop = onPhone.watch(start, (batch) => seen.push(...batch), { onError: (err) => errors.push(err) });
    try {
      const first = changes('laptop', 100, 150);
      const second = changes('laptop', 150, 200);
      assert.equal(await onLaptop.publish(first), 50);
      await until(() => seen.length === 50, 5000, 'the watcher to see the first half');

      server.kill();
      await until(() => laptop.status === 'offline', 10_000, 'the laptop to notice');
      const started = Date.now();
      assert.equal(await onLaptop.publish(second), 0, 'nothing is acknowledged while offline');
      assert.ok(Date.now() - started < 1000, 'publishing offline returns at once');

      server.start();
      await until(() => laptop.status === 'online', 15_000, 'the laptop to reconnect');
      assert.deepEqual(statuses.slice(-2), ['offline', 'online']);
      // The outbox publishes everything not known to be acknowledged, again, with the same ids.
      assert.equal(await onLaptop.publish(second), 50);
      await until(() => seen.length >= 100, 15_000, 'the watcher to resume');

      const { messages } = await onLaptop.fetch(start, 100_000);
      assert.deepEqual(messages.map((m) => m.id), [...first, ...second].map((m) => m.id), 'each once, in order');
      assert.deepEqual(seen.map((m) => m.id), [...first, ...second].map((m) => m.id), 'the watcher too');
      assert.deepEqual(errors, []);
    } finally {
      await stop();
    }
  });
});

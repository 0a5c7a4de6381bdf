// A three-node JetStream cluster (scripts/nats-cluster.sh): a connection given every node's URL keeps
// publishing and reading while the node that leads the space's stream is killed; every change is
// stored once, in order, and what fails meanwhile is a failure to try again, never one to stop for.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ALICE, changes, startCluster } from '../support/server.mjs';
import { streamCluster } from '../support/provision.mjs';
import { connect, openSpace } from '../index.mjs';

const PASSPHRASE = 'cluster passphrase';

describe('a three-node cluster', { timeout: 120_000 }, () => {
  let cluster;
  let laptop;
  let phone;

  before(() => {
    cluster = startCluster({ spaces: ['alice'] });
  });
  after(async () => {
    await Promise.allSettled([laptop?.close(), phone?.close()]);
    cluster?.stop();
  });

  test('the stream leader killed mid-publish: every change stored once, in order; failures meanwhile are passing ones', async (t) => {
    const info = await streamCluster(cluster.wsUrls, 'alice');
    assert.equal(info.replicas.length, 2, `two replicas besides the leader: ${JSON.stringify(info)}`);
    laptop = await connect({ servers: cluster.wsUrls, ...ALICE, name: 'laptop' });
    phone = await connect({ servers: [...cluster.wsUrls].reverse(), ...ALICE, name: 'phone' });
    const onLaptop = await openSpace(laptop, { space: 'alice', passphrase: PASSPHRASE, create: true });
    const onPhone = await openSpace(phone, { space: 'alice', passphrase: PASSPHRASE });
    const all = changes('laptop', 0, 400);
    let sent = 0;
    const failures = [];
    const node = Number(info.leader.match(/^cowork-([123])$/)[1]);
    const start = Date.now();
    let killedAt = null;
    // The storage worker's way: publish what is not acknowledged yet, again with the same ids.
    while (sent < all.length) {
      if (killedAt === null && sent >= 100) {
        cluster.kill(node);
        killedAt = Date.now();
      }
      try {
        sent += await onLaptop.publish(all.slice(sent, sent + 20));
      } catch (err) {
        failures.push(`${err.kind}: ${err.message}`);
        sent += err.acknowledged ?? 0;
        await new Promise((ok) => setTimeout(ok, 250));
      }
      assert.ok(Date.now() - start < 90_000, `all published within 90 s (${sent} of ${all.length}; ${failures.at(-1)})`);
    }
    const got = [];
    for (let after = 0, i = 0; got.length < all.length && i < 200; i++) {
      try {
        const { messages, lastSeq } = await onPhone.fetch(after, 100);
        got.push(...messages);
        after = lastSeq;
      } catch (err) {
        failures.push(`${err.kind}: ${err.message}`);
        await new Promise((ok) => setTimeout(ok, 250));
      }
    }
    assert.deepEqual(got.map((m) => m.id), all.map((m) => m.id), 'every change once, in the order published');
    assert.deepEqual(got.map((m) => m.body), all.map((m) => m.body));
    const kinds = new Set(failures.map((f) => f.split(':')[0]));
    assert.ok([...kinds].every((k) => k === 'server' || k === 'unreachable'), `only passing failures: ${[...new Set(failures)].join(' | ')}`);
    assert.ok(!failures.some((f) => /turned off/.test(f)), `a cluster choosing a leader is not said to have JetStream off: ${failures.join(' | ')}`);
    const now = await streamCluster(cluster.wsUrls.filter((_, i) => i + 1 !== node), 'alice');
    assert.notEqual(now.leader, info.leader, 'another node leads the stream');
    t.diagnostic(`killed ${info.leader} after 100 of ${all.length}; ${failures.length} failures, all published ${Date.now() - killedAt} ms after the kill`);
  });

  test('followed by push through the cluster, as the worker does: each change arrives once, in order, by push or, after a stall, by a fetch', async (t) => {
    const writer = await connect({ servers: cluster.wsUrls, ...ALICE, name: 'writer' });
    const reader = await connect({ servers: [...cluster.wsUrls].reverse(), ...ALICE, name: 'reader' });
    try {
      const onWriter = await openSpace(writer, { space: 'alice', passphrase: PASSPHRASE, create: true });
      const onReader = await openSpace(reader, { space: 'alice', passphrase: PASSPHRASE });
      let read = (await onReader.fetch(0, 100_000)).lastSeq;
      let follower = onReader.follow(read);
      const got = [];
      const stalls = [];
      for (let i = 0; i < 20; i++) {
        assert.equal(await onWriter.publish(changes('writer', i, i + 1)), 1);
        const end = Date.now() + 10_000;
        while (got.length < i + 1) {
          assert.ok(Date.now() < end, `change ${i} did not arrive within 10 s (${stalls.join('; ')})`);
          await follower.wait(300);
          const taken = follower.take();
          if (taken && taken.after === read) {
            got.push(...taken.messages);
            read = taken.lastSeq;
            continue;
          }
          stalls.push(follower.broken?.message ?? 'a take that did not continue the read');
          await follower.stop();
          const fetched = await onReader.fetch(read, 1000);
          got.push(...fetched.messages);
          read = fetched.lastSeq;
          follower = onReader.follow(read);
        }
      }
      await follower.stop();
      assert.deepEqual(got.map((m) => m.id), changes('writer', 0, 20).map((m) => m.id), 'each once, in order');
      t.diagnostic(`${stalls.length} fallbacks to fetching: ${stalls.join('; ')}`);
    } finally {
      await Promise.allSettled([writer.close(), reader.close()]);
    }
  });
});

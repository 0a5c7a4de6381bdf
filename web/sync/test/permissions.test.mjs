// The server's subject permissions (tests/nats/server.conf, account SHARED) keep each personal space to
// its owner and let both members use the team space; the administrator makes the streams.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { headers, wsconnect } from '@nats-io/nats-core';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { ALICE, BOB, CAROL, changes, startServer } from '../support/server.mjs';
import { connect, openSpace } from '../index.mjs';

const ALICE_PASSPHRASE = 'alice passphrase';
const TEAM_PASSPHRASE = 'the team passphrase';

// The client reports a refused request as a RequestError caused by the server's permission violation.
const refused = (err) => [err?.name, err?.cause?.name].includes('PermissionViolationError');

describe('spaces and permissions', { timeout: 60_000 }, () => {
  let server;
  let alice;
  let bob;
  let alicesSpace;

  before(async () => {
    // The administrator has made the streams of alice's space and team1, not yet bob's.
    server = startServer({ spaces: ['alice', 'team1'] });
    alice = await connect({ url: server.wsUrl, ...ALICE });
    bob = await connect({ url: server.wsUrl, ...BOB });
    // The stream is the administrator's; its first member sets up the encryption.
    alicesSpace = await openSpace(alice, { space: 'alice', passphrase: ALICE_PASSPHRASE, create: true });
    assert.equal(await alicesSpace.publish(changes('alice', 0, 5)), 5);
  });
  after(async () => {
    await Promise.allSettled([alice?.close(), bob?.close()]);
    server?.stop();
  });

  // The raw NATS client as bob, to try what the module never would.
  async function asBob(fn) {
    const nc = await wsconnect({ servers: server.wsUrl, user: BOB.user, pass: BOB.pass, inboxPrefix: '_INBOX_bob' });
    try {
      return await fn(nc);
    } finally {
      await nc.close();
    }
  }

  test("bob cannot open alice's space, even knowing her passphrase", async () => {
    await assert.rejects(openSpace(bob, { space: 'alice', passphrase: ALICE_PASSPHRASE }), (err) => {
      assert.equal(err.kind, 'permission');
      assert.equal(err.message, 'The sync server does not let user bob use space "alice": check the space name, or ask the server\'s administrator for access.');
      return true;
    });
    await assert.rejects(openSpace(bob, { space: 'alice', passphrase: ALICE_PASSPHRASE, create: true }), { kind: 'permission' });
  });

  test("bob cannot write to alice's space, read it, add a consumer, or listen in", async () => {
    await asBob(async (nc) => {
      const js = jetstream(nc, { timeout: 3000 });
      await assert.rejects(js.publish('cowork.alice.turn.x', 'forged', { msgID: 'bob:1' }), refused);
      const h = headers();
      h.set('Nats-Msg-Id', 'bob:2');
      await assert.rejects(nc.request('cowork.alice.turn.y', 'forged', { headers: h, timeout: 3000 }), refused);
      const jsm = await jetstreamManager(nc, { checkAPI: false, timeout: 3000 });
      await assert.rejects(jsm.streams.info('cowork_alice'), refused);
      await assert.rejects(jsm.streams.getMessage('cowork_alice', { seq: 2 }), refused);
      await assert.rejects(jsm.consumers.add('cowork_alice', { name: 'snoop', ack_policy: 'none' }), refused);
      // Nor subscribe to alice's subjects, or to her inbox where the server's replies to her arrive.
      for (const subject of ['cowork.alice.>', '_INBOX_alice.>', '_INBOX.>', '>']) {
        // The first callback is the server's refusal, or a timeout (3 s) when it let bob subscribe.
        const first = await new Promise((resolve) => nc.subscribe(subject, { timeout: 3000, callback: resolve }));
        assert.ok(refused(first), `subscribing to ${subject}: ${first}`);
      }
    });
    assert.deepEqual(
      (await alicesSpace.fetch(0, 100)).messages.map((m) => m.id),
      changes('alice', 0, 5).map((m) => m.id),
      "alice's space is as she left it",
    );
  });

  test('members cannot create or change streams, so none can capture the subjects of another', async () => {
    // bob may use the space "bob", but the administrator has not made its stream yet.
    await assert.rejects(openSpace(bob, { space: 'bob', passphrase: 'bob passphrase', create: true }), (err) => {
      assert.equal(err.kind, 'permission');
      assert.equal(
        err.message,
        'There is no space "bob" on the sync server, and user bob may not create it: check its name, or ask the server\'s administrator to create the stream cowork_bob.',
      );
      return true;
    });
    await asBob(async (nc) => {
      const jsm = await jetstreamManager(nc, { checkAPI: false, timeout: 3000 });
      const capture = { name: 'cowork_bob', subjects: ['cowork.bob.>', '_INBOX_alice.>'] };
      await assert.rejects(jsm.streams.add(capture), refused);
      const update = { name: 'cowork_team1', subjects: ['cowork.team1.>', '_INBOX_alice.>'] };
      await assert.rejects(nc.request('$JS.API.STREAM.UPDATE.cowork_team1', JSON.stringify(update), { timeout: 3000 }), refused);
    });
  });

  test('both use the team space; until a member sets it up, it cannot be opened', async () => {
    await assert.rejects(openSpace(bob, { space: 'team1', passphrase: TEAM_PASSPHRASE }), { kind: 'invalid', message: /not been set up/ });
    const aliceTeam = await openSpace(alice, { space: 'team1', passphrase: TEAM_PASSPHRASE, create: true });
    const bobTeam = await openSpace(bob, { space: 'team1', passphrase: TEAM_PASSPHRASE });
    assert.equal(await aliceTeam.publish(changes('alice', 0, 3)), 3);
    assert.equal(await bobTeam.publish(changes('bob', 0, 2)), 2);
    assert.equal(await aliceTeam.publish(changes('alice', 3, 4)), 1);
    const expected = ['alice:0', 'alice:1', 'alice:2', 'bob:0', 'bob:1', 'alice:3'];
    assert.deepEqual((await bobTeam.fetch(0, 100)).messages.map((m) => m.id), expected);
    assert.deepEqual((await aliceTeam.fetch(0, 100)).messages.map((m) => m.id), expected);
    // Set up once: a second `create` with another passphrase does not replace the key.
    await assert.rejects(openSpace(bob, { space: 'team1', passphrase: 'bob would rather', create: true }), { kind: 'passphrase' });
  });

  test('another account sees none of these spaces', async () => {
    const carol = await connect({ url: server.wsUrl, ...CAROL });
    try {
      await assert.rejects(openSpace(carol, { space: 'team1', passphrase: TEAM_PASSPHRASE }), { kind: 'invalid', message: /no space "team1"/ });
    } finally {
      await carol.close();
    }
  });
});

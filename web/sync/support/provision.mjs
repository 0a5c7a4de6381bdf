// The administrator's step on a shared sync server (tests/nats/server.conf, account SHARED): makes the
// stream of each space, since members may not create streams. Run by scripts/nats.sh and
// scripts/nats-cluster.sh after they start the server:
//   node web/sync/support/provision.mjs [--replicas N] ws://127.0.0.1:PORT[,ws://…] alice bob team1
// Several comma-separated URLs are the nodes of one cluster; `--replicas 3` keeps each stream on three
// of them. It first waits (30 s at most) for JetStream to answer: a cluster's answers once its nodes
// have elected a leader. A stream that is already there is left as it is. Only the streams: the first
// member to open a space with `create` sets up its encryption.
import { fileURLToPath } from 'node:url';
import { wsconnect } from '@nats-io/nats-core';
import { jetstreamManager } from '@nats-io/jetstream';

// Browsers and Node ≥ 22 have a WebSocket; Node 20 gets the `ws` package's, which the NATS client
// drives through the same browser API.
if (typeof globalThis.WebSocket !== 'function') globalThis.WebSocket = (await import('ws')).WebSocket;

export const ADMIN = { user: 'admin', pass: 'admin-secret' };

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/** Creates the streams of `spaces` on the server at `wsUrl` (one URL or a list) as the SHARED
 *  account's administrator, each with `replicas` copies. */
export async function provision(wsUrl, spaces, { replicas = 1, waitMs = 30_000 } = {}) {
  const nc = await wsconnect({ servers: wsUrl, user: ADMIN.user, pass: ADMIN.pass, inboxPrefix: '_INBOX_admin', timeout: 5000 });
  try {
    const jsm = await jetstreamManager(nc, { checkAPI: false, timeout: 5000 });
    // Until a cluster has a JetStream leader, its API has no responders or says it is unavailable.
    for (const deadline = Date.now() + waitMs; ; ) {
      try {
        await jsm.getAccountInfo();
        break;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`JetStream did not answer within ${waitMs / 1000} s: ${err?.message ?? err}`);
        await sleep(250);
      }
    }
    for (const space of spaces) {
      const name = `cowork_${space}`;
      const exists = await jsm.streams.info(name).then(
        () => true,
        (err) => (err?.name === 'StreamNotFoundError' ? false : Promise.reject(err)),
      );
      if (!exists) {
        await jsm.streams.add({
          name, subjects: [`cowork.${space}.>`], storage: 'file', num_replicas: replicas, deny_delete: true, deny_purge: true,
        });
      }
    }
  } finally {
    await nc.close();
  }
}

/** Where the stream of `space` stands in a cluster, as its administrator asks the server: the name of
 *  the node that leads it, its replicas and how many messages it holds. */
export async function streamCluster(wsUrl, space) {
  const nc = await wsconnect({ servers: wsUrl, user: ADMIN.user, pass: ADMIN.pass, inboxPrefix: '_INBOX_admin', timeout: 5000 });
  try {
    const jsm = await jetstreamManager(nc, { checkAPI: false, timeout: 5000 });
    const info = await jsm.streams.info(`cowork_${space}`);
    return { leader: info.cluster?.leader ?? null, replicas: info.cluster?.replicas ?? [], messages: info.state.messages };
  } finally {
    await nc.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  let replicas = 1;
  if (args[0] === '--replicas') {
    replicas = Number(args[1]);
    args.splice(0, 2);
  }
  const [wsUrl, ...spaces] = args;
  await provision(wsUrl.split(','), spaces, { replicas });
}

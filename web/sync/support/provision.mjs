// The administrator's step on a shared sync server (tests/nats/server.conf, account SHARED): makes the
// stream of each space, since members may not create streams. Run by scripts/nats.sh after it starts
// the server:
//   node web/sync/support/provision.mjs ws://127.0.0.1:PORT alice bob team1
// A stream that is already there is left as it is. Only the streams: the first member to open a space
// with `create` sets up its encryption.
import { fileURLToPath } from 'node:url';
import { wsconnect } from '@nats-io/nats-core';
import { jetstreamManager } from '@nats-io/jetstream';

// Browsers and Node ≥ 22 have a WebSocket; Node 20 gets the `ws` package's, which the NATS client
// drives through the same browser API.
if (typeof globalThis.WebSocket !== 'function') globalThis.WebSocket = (await import('ws')).WebSocket;

export const ADMIN = { user: 'admin', pass: 'admin-secret' };

/** Creates the streams of `spaces` on the server at `wsUrl` as the SHARED account's administrator. */
export async function provision(wsUrl, spaces) {
  const nc = await wsconnect({ servers: wsUrl, user: ADMIN.user, pass: ADMIN.pass, inboxPrefix: '_INBOX_admin', timeout: 5000 });
  try {
    const jsm = await jetstreamManager(nc, { checkAPI: false, timeout: 5000 });
    for (const space of spaces) {
      const name = `cowork_${space}`;
      const exists = await jsm.streams.info(name).then(
        () => true,
        (err) => (err?.name === 'StreamNotFoundError' ? false : Promise.reject(err)),
      );
      if (!exists) {
        await jsm.streams.add({ name, subjects: [`cowork.${space}.>`], storage: 'file', deny_delete: true, deny_purge: true });
      }
    }
  } finally {
    await nc.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [wsUrl, ...spaces] = process.argv.slice(2);
  await provision(wsUrl, spaces);
}

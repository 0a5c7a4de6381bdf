// Helpers of the tests in ../test/: a real nats-server on loopback (scripts/nats.sh with
// tests/nats/server.conf), or a three-node cluster of them (scripts/nats-cluster.sh), in a temporary
// directory, stopped and removed by `stop()`, and the users of that config.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Browsers and Node ≥ 22 have a WebSocket; Node 20 gets the `ws` package's, which the NATS client
// drives through the same browser API.
if (typeof globalThis.WebSocket !== 'function') globalThis.WebSocket = (await import('ws')).WebSocket;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const SCRIPT = join(ROOT, 'scripts/nats.sh');

export const ALICE = { user: 'alice', pass: 'alice-secret' };
export const BOB = { user: 'bob', pass: 'bob-secret' };
/** The one user of the SOLO account: no restrictions, so `create` makes streams. */
export const CAROL = { user: 'carol', pass: 'carol-secret' };

/**
 * Starts a server on which the administrator (SHARED account) has made the streams of `spaces`;
 * `maxPayload` in bytes. Returns { dir, wsUrl, pid, store, start, kill, stop }.
 */
export function startServer({ maxPayload = 1 << 20, spaces = [] } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'cowork-nats-'));
  const server = { dir, store: join(dir, 'store') };
  const run = (cmd) =>
    execFileSync('bash', [SCRIPT, cmd, dir], {
      encoding: 'utf8',
      timeout: 20_000,
      env: {
        ...process.env,
        COWORK_NATS_MAX_PAYLOAD: String(maxPayload),
        COWORK_NATS_SPACES: spaces.join(' '),
        COWORK_NATS_LIFETIME: '600',
      },
    });
  /** (Re)starts the server on the same ports and store. */
  server.start = () => {
    const env = Object.fromEntries(run('start').trim().split('\n').map((line) => line.split(/=(.*)/s).slice(0, 2)));
    server.wsUrl = env.NATS_WS_URL;
    server.pid = Number(env.NATS_PID);
  };
  /** Kills the server at once (SIGKILL), as a crash would. */
  server.kill = () => {
    process.kill(server.pid, 'SIGKILL');
    const until = Date.now() + 5000;
    while (Date.now() < until && alive(server.pid)) execFileSync('sleep', ['0.05']);
  };
  /** Stops the server and removes its directory. */
  server.stop = () => {
    try {
      run('stop');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    server.start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return server;
}

/**
 * Starts a three-node cluster (scripts/nats-cluster.sh) on which the administrator has made the streams
 * of `spaces`, three replicas each. Returns { dir, wsUrls, pids, kill(node), stop }.
 */
export function startCluster({ spaces = [] } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'cowork-nats-cluster-'));
  const run = (...args) =>
    execFileSync('bash', [join(ROOT, 'scripts/nats-cluster.sh'), ...args], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, COWORK_NATS_SPACES: spaces.join(' '), COWORK_NATS_LIFETIME: '600' },
    });
  let env;
  try {
    env = Object.fromEntries(run('start', dir).trim().split('\n').map((line) => line.split(/=(.*)/s).slice(0, 2)));
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    dir,
    wsUrls: env.NATS_WS_URLS.split(','),
    pids: [1, 2, 3].map((n) => Number(env[`NATS_PID_${n}`])),
    /** Kills node `n` (1–3) at once (SIGKILL), as a crash would. */
    kill(n) {
      const pid = this.pids[n - 1];
      process.kill(pid, 'SIGKILL');
      const until = Date.now() + 5000;
      while (Date.now() < until && alive(pid)) execFileSync('sleep', ['0.05']);
    },
    /** Stops every node and removes the directory. */
    stop() {
      try {
        run('stop', dir);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every file under `dir`, as [path, bytes]. */
export function filesUnder(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push([path, readFileSync(path)]);
  }
  return out;
}

/** Resolves when `predicate()` is true, polling every 20 ms; rejects after `ms`. */
export async function until(predicate, ms, what) {
  const end = Date.now() + ms;
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** `n` messages of one device, ids `<device>:<i>`, each body a JSON string with a unique sentence. */
export function changes(device, from, to, subject = (i) => `turn.${device}-${i}`) {
  const out = [];
  for (let i = from; i < to; i++) {
    out.push({ id: `${device}:${i}`, subject: subject(i), body: JSON.stringify({ seq: i, text: `secret sentence ${device} number ${i}` }) });
  }
  return out;
}

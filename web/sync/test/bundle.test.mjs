// What the app ships: scripts/sync-bundle.sh's sync-<hash>.js, named in the page, loaded as the storage
// worker loads it (a classic script defining `CoworkSync`), and working against a real server.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInThisContext } from 'node:vm';
import { after, before, describe, test } from 'node:test';
import { CAROL, changes, startServer, until } from '../support/server.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('the bundle the app loads', { timeout: 60_000 }, () => {
  let server;
  let stage;
  let page;
  let file;

  before(() => {
    stage = mkdtempSync(join(tmpdir(), 'cowork-stage-'));
    writeFileSync(join(stage, 'index.html'), '<!doctype html>\n<html>\n  <head>\n    <meta charset="utf-8" />\n  </head>\n</html>\n');
    execFileSync('sh', ['scripts/sync-bundle.sh'], { cwd: ROOT, env: { ...process.env, TRUNK_STAGING_DIR: stage }, timeout: 60_000 });
    page = readFileSync(join(stage, 'index.html'), 'utf8');
    file = readdirSync(stage).find((name) => /^sync-[0-9a-f]{16}\.js$/.test(name));
    server = startServer();
  });
  after(() => {
    server?.stop();
    if (stage) rmSync(stage, { recursive: true, force: true });
  });

  test('is named in the page and carries the licences of what it bundles', () => {
    assert.ok(file, 'sync-<hash>.js is in the build');
    assert.ok(page.includes(`<meta charset="utf-8" />\n    <meta name="cowork-sync" content="./${file}" />`), page);
    const head = readFileSync(join(stage, file), 'utf8').slice(0, 4000);
    for (const name of ['@nats-io/nats-core 3.4.0 (Apache-2.0)', '@nats-io/jetstream 3.4.0 (Apache-2.0)', 'tweetnacl']) {
      assert.ok(head.includes(name), `the licence header names ${name}`);
    }
    assert.match(head, /Apache License\s+Version 2\.0/);
  });

  test('a second build with nothing changed makes the same file', () => {
    const again = mkdtempSync(join(tmpdir(), 'cowork-stage-'));
    try {
      copyFileSync(join(ROOT, 'index.html'), join(again, 'index.html'));
      execFileSync('sh', ['scripts/sync-bundle.sh'], { cwd: ROOT, env: { ...process.env, TRUNK_STAGING_DIR: again }, timeout: 60_000 });
      assert.ok(readdirSync(again).includes(file));
    } finally {
      rmSync(again, { recursive: true, force: true });
    }
  });

  test('loaded as a classic script, its CoworkSync syncs two devices', async () => {
    runInThisContext(readFileSync(join(stage, file), 'utf8'), { filename: file });
    const { CoworkSync } = globalThis;
    assert.deepEqual(Object.keys(CoworkSync).sort(), ['SyncError', 'connect', 'newRecoveryKey', 'openSpace']);
    const laptop = await CoworkSync.connect({ url: server.wsUrl, ...CAROL, token: '', name: 'laptop' });
    const phone = await CoworkSync.connect({ url: server.wsUrl, ...CAROL, name: 'phone' });
    try {
      const key = CoworkSync.newRecoveryKey();
      const here = await CoworkSync.openSpace(laptop, { space: 'carol', passphrase: key, create: true });
      const there = await CoworkSync.openSpace(phone, { space: 'carol', passphrase: key });
      const seen = [];
      const stop = there.watch(0, (batch) => seen.push(...batch));
      assert.equal(await here.publish(changes('laptop', 0, 3)), 3);
      await until(() => seen.length === 3, 5000, 'the phone to see the laptop');
      await stop();
      assert.deepEqual(seen.map((m) => m.body), changes('laptop', 0, 3).map((m) => m.body));
      await assert.rejects(CoworkSync.openSpace(phone, { space: 'carol', passphrase: 'not the key' }), (err) => {
        assert.ok(err instanceof CoworkSync.SyncError);
        assert.equal(err.kind, 'passphrase');
        return true;
      });
    } finally {
      await Promise.allSettled([laptop.close(), phone.close()]);
    }
  });
});

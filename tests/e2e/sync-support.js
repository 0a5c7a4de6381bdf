// What the sync end-to-end specs share: turning sync on in Settings → Sync, a generated ChatGPT
// export to import, waiting for the header to say Synced, and the NATS servers on loopback
// (scripts/nats.sh for one, scripts/nats-cluster.sh for a three-node cluster).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Runs `scripts/<name> <args…>` with `env` added, and returns the KEY=value lines it printed, as an object. */
export function script(name, args, env = {}) {
  const out = execFileSync('bash', [join(root, 'scripts', name), ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  return Object.fromEntries(
    out.trim().split('\n').filter((l) => l.includes('=')).map((l) => l.split('=')).map(([k, ...v]) => [k, v.join('=')]),
  );
}

/**
 * Sets sync up on `page` as device `device` through Settings → Sync: `server` is what is typed into
 * the server field (one URL, or several separated by commas). Leaves the dialog open when `keepOpen`.
 */
export async function turnOnSync(page, { server, device, passphrase = 'correct horse battery staple', user = 'alice', password, space = '', keepOpen = false }) {
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  await page.getByRole('tab', { name: 'Sync', exact: true }).click();
  const dialog = page.locator('.sync-dialog');
  await dialog.locator('input[name="sync-server"]').fill(server);
  await dialog.locator('input[name="sync-user"]').fill(user);
  await dialog.locator('input[name="sync-password"]').fill(password ?? `${user}-secret`);
  await dialog.locator('input[name="sync-space"]').fill(space);
  await dialog.locator('input[name="sync-passphrase"]').fill(passphrase);
  await dialog.locator('input[name="sync-device"]').fill(device);
  await dialog.getByRole('button', { name: 'Sync this archive' }).click();
  if (!keepOpen) await dialog.getByRole('button', { name: 'Close' }).click();
  return dialog;
}

/** Waits for the header to say Synced; on a timeout the error says what it said instead. */
export async function waitSynced(page, timeout = 30_000) {
  try {
    await page.locator('.sync-status', { hasText: /^Synced$/ }).waitFor({ timeout });
  } catch (e) {
    const status = page.locator('.sync-status');
    throw new Error(`not synced after ${timeout} ms: "${await status.innerText()}" (${await status.getAttribute('title')})`, { cause: e });
  }
}

/** A ChatGPT export (its `conversations.json` shape) of `conversations` linear conversations of
 *  `pairs` questions and answers each; every text is unique (`tag`, conversation, turn). */
export function chatgptExport(conversations, pairs, tag) {
  return Array.from({ length: conversations }, (_, c) => {
    const mapping = { root: { id: 'root', parent: null, children: ['m0'], message: null } };
    for (let i = 0; i < pairs * 2; i++) {
      const id = `m${i}`;
      const role = i % 2 ? 'assistant' : 'user';
      const text = role === 'user' ? `${tag} ${c}.${i}: where does the otter go?` : `${tag} ${c}.${i}: to pond ${c * 1000 + i}.`;
      mapping[id] = {
        id, parent: i ? `m${i - 1}` : 'root', children: i + 1 < pairs * 2 ? [`m${i + 1}`] : [],
        message: {
          id, author: { role, name: null, metadata: {} }, create_time: 1_700_000_000 + c * 1000 + i,
          content: { content_type: 'text', parts: [text] }, status: 'finished_successfully', metadata: {}, recipient: 'all',
        },
      };
    }
    return {
      title: `${tag} archive ${c}`, conversation_id: `conv-${tag}-${c}`, create_time: 1_700_000_000 + c * 1000,
      update_time: 1_700_000_000 + c * 1000 + pairs * 2, current_node: `m${pairs * 2 - 1}`, mapping,
    };
  });
}

/** `page`'s user turns, as the export has them, each as often as it is there. */
export function userTurns(lines) {
  return lines.filter((l) => l.type === 'turn' && l.role === 'user').map((l) => l.content);
}

/** Asserts every text of `expected` is in `got` exactly once, and nothing else is. */
export function assertOnce(got, expected, what) {
  const counts = new Map();
  for (const t of got) counts.set(t, (counts.get(t) ?? 0) + 1);
  const doubled = [...counts].filter(([, n]) => n > 1).map(([t, n]) => `${n}× ${t}`);
  const missing = expected.filter((t) => !counts.has(t));
  const extra = [...counts.keys()].filter((t) => !expected.includes(t));
  assert.deepEqual({ doubled: doubled.slice(0, 5), missing: missing.slice(0, 5), extra: extra.slice(0, 5) },
    { doubled: [], missing: [], extra: [] }, `${what}: every turn exactly once (${got.length} turns, ${expected.length} expected)`);
}

/** Records every text and class the header's sync status shows, into `window.sawSync`. */
export async function watchHeader(page) {
  await page.evaluate(() => {
    window.sawSync = [];
    const note = () => {
      const s = document.querySelector('.sync-status');
      const seen = s && `${s.className.includes('failed') ? 'failed' : s.className.includes('offline') ? 'offline' : 'ok'}: ${s.textContent}`;
      if (seen && window.sawSync.at(-1) !== seen) window.sawSync.push(seen);
    };
    new MutationObserver(note).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  });
}

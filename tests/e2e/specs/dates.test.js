// Dates and relative times in the sidebar are in the user's language and time zone (the browser's
// Intl), not in UTC and English: a browser in German on Auckland time reads an imported session's
// last activity as the Auckland date, a session active a minute ago as "vor 1 Minute", and hovering
// shows the full local date and time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, launchBrowser, openPage, ready, importFile } from '../harness.js';

const LOCALE = 'de-DE';
const ZONE = 'Pacific/Auckland';
// 20:30 on 10 March in UTC is 09:30 on 11 March in Auckland (NZDT, UTC+13).
const OLD = Date.parse('2024-03-10T20:30:00Z');

/** A session line and its one user turn, as the JSON Lines archive format has them (core/src/store/jsonl.rs). */
function sessionLines(title, lastActiveAt) {
  const id = randomUUID();
  const session = {
    type: 'session',
    id,
    workspace: 'dates',
    title,
    model: 'demo',
    system_prompt: '',
    created_at: lastActiveAt,
    last_active_at: lastActiveAt,
    turn_count: 1,
    prompt_tokens: 0,
    completion_tokens: 0,
    state: {},
    parent_session_id: null,
    fork_turn: null,
    is_archived: false,
  };
  const turn = {
    type: 'turn',
    session_id: id,
    turn_number: 1,
    role: 'user',
    content: `${title}: a question`,
    tool_calls: [],
    tool_call_id: null,
    tool_name: null,
    token_count: 4,
    status: 'complete',
    created_at: lastActiveAt,
    metadata: {},
  };
  return [session, turn];
}

test('the sidebar shows dates and relative times in the browser locale and time zone', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cowork-dates-'));
  const server = await startServer();
  const browser = await launchBrowser({ options: { locale: LOCALE, timezoneId: ZONE } });
  try {
    // A minute and a second ago: still "1 minute ago" for the next 59 s.
    const recent = Date.now() - 61_000;
    const lines = [
      { type: 'header', format: 'cowork-archive', version: 1 },
      ...sessionLines('dates-old session from March', OLD),
      ...sessionLines('dates-recent session a minute ago', recent),
      { type: 'end', sessions: 2, turns: 2 },
    ];
    const file = join(dir, 'dates.jsonl');
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');

    const page = await openPage(browser.context, server.url);
    await ready(page);
    await importFile(page, file, 2);

    // The old session: the German medium date in Auckland (11.03.2024), not the UTC one (10.03.2024).
    const medium = (timeZone) => new Intl.DateTimeFormat(LOCALE, { dateStyle: 'medium', timeZone }).format(OLD);
    const local = medium(ZONE);
    const utc = medium('UTC');
    assert.notEqual(local, utc, 'the instant falls on different dates in UTC and Auckland');
    const oldMeta = page.locator('.session-row', { hasText: 'dates-old session' }).locator('.session-meta');
    await oldMeta.waitFor();
    const oldText = (await oldMeta.innerText()).trim();
    assert.ok(oldText.endsWith(`· ${local}`), `"${oldText}" ends with the Auckland date ${local}`);
    assert.ok(!oldText.includes(utc), `"${oldText}" does not show the UTC date ${utc}`);
    assert.ok(!oldText.includes('2024-03-10'), 'no ISO date');

    // Hovering shows the full local date and time ("Montag, 11. März 2024 um 09:30").
    const full = await page.evaluate(
      ([ms, locale, timeZone]) =>
        new Intl.DateTimeFormat(locale, { dateStyle: 'full', timeStyle: 'short', timeZone }).format(ms),
      [OLD, LOCALE, ZONE],
    );
    assert.equal(await oldMeta.getAttribute('title'), full);
    assert.ok(full.includes('11.') && full.includes('09:30'), full);

    // The recent session: German relative time ("vor 1 Minute"), from Intl.RelativeTimeFormat.
    const minuteAgo = new Intl.RelativeTimeFormat(LOCALE, { numeric: 'auto' }).format(-1, 'minute');
    const recentMeta = page.locator('.session-row', { hasText: 'dates-recent session' }).locator('.session-meta');
    const recentText = (await recentMeta.innerText()).trim();
    assert.ok(recentText.endsWith(`· ${minuteAgo}`), `"${recentText}" ends with ${minuteAgo}`);
    assert.ok(!/ago|just now/.test(recentText), `"${recentText}" is not in English`);
    assert.equal(
      await recentMeta.getAttribute('title'),
      await page.evaluate(
        ([ms, locale, timeZone]) =>
          new Intl.DateTimeFormat(locale, { dateStyle: 'full', timeStyle: 'short', timeZone }).format(ms),
        [recent, LOCALE, ZONE],
      ),
    );
    assert.deepEqual(page.problems, []);
    await page.close();
  } finally {
    await browser.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

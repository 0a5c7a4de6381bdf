// Code blocks: the highlighter is fetched only when the first code block is on screen (never at start),
// colours it in both themes, labels its language, Copy copies the code exactly, long lines scroll, and
// code from the model cannot become markup. The screen reader hears a finished reply once. Dates follow
// the browser context's time zone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useServerAndBrowser, launchBrowser, openPage, ready, replyDone, send, importFile } from '../harness.js';

const app = useServerAndBrowser();

const HIGHLIGHTER = /\/highlight-[0-9a-f]{16}\.js$/;
const LONG = `print("${'a long line that must scroll sideways, not wrap; '.repeat(6).trim()}")`;
const CODE = `def greet(name):\n    """Say hello."""\n    return f"hello {name}"  # a comment\n\n${LONG}`;

/** Records the page's requests for the highlighter. */
function watchHighlighter(page) {
  const seen = [];
  page.on('request', (r) => HIGHLIGHTER.test(new URL(r.url()).pathname) && seen.push(r.url()));
  return seen;
}

/** Relative luminance of a CSS `rgb(…)` colour, and the contrast ratio of two. */
function luminance(css) {
  const [r, g, b] = css.match(/[\d.]+/g).slice(0, 3).map((v) => {
    const c = Number(v) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
const contrast = (a, b) => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
};

/** The colours of the `def` keyword, of its block's plain text and of its background. */
const keywordColours = (block) =>
  block.evaluate((code) => {
    const keyword = [...code.querySelectorAll('.hljs-keyword')].find((k) => k.textContent === 'def');
    const pre = getComputedStyle(code.closest('pre'));
    return { keyword: getComputedStyle(keyword).color, text: pre.color, background: pre.backgroundColor };
  });

/** Clicks the header's theme button until the page's theme is `want` (light or dark). */
async function chooseTheme(page, want) {
  for (let i = 0; i < 3 && (await page.evaluate(() => document.documentElement.dataset.theme)) !== want; i++) {
    await page.locator('.theme-toggle').click();
  }
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), want);
}

test('a Python block loads the highlighter then: coloured in both themes, labelled, copied exactly, scrolling', async () => {
  const origin = new URL(app.server.url).origin;
  await app.browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const page = await openPage(app.browser.context, app.server.url);
  const fetched = watchHighlighter(page);
  await ready(page);
  assert.match(await page.locator('meta[name="cowork-highlighter"]').getAttribute('content'), /^\.\/highlight-[0-9a-f]{16}\.js$/);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'hl-plain a reply without code');
  await page.locator('.turn[data-role="assistant"]', { hasText: 'You said' }).waitFor({ timeout: 20_000 });
  await replyDone(page);
  assert.deepEqual(fetched, [], 'no code block yet: the highlighter was not requested');

  await send(page, `[[code:python]]\n${CODE}`);
  const reply = page.locator('.turn[data-role="assistant"]', { hasText: 'Here it is as python' });
  const code = reply.locator('pre > code.language-python[data-highlight="done"]');
  await code.waitFor({ timeout: 20_000 });
  await replyDone(page);
  assert.equal(fetched.length, 1, `the highlighter was fetched once, for the first block: ${fetched}`);
  assert.ok(await code.locator('.hljs-keyword', { hasText: /^def$/ }).count() >= 1, 'def is a keyword');
  assert.ok(await code.locator('.hljs-string').count() >= 1, 'strings are marked');
  assert.ok(await code.locator('.hljs-comment', { hasText: '# a comment' }).count() === 1, 'the comment is marked');
  assert.equal(await code.textContent(), `${CODE}\n`, 'the text is unchanged by colouring');
  assert.equal((await reply.locator('.code-lang').innerText()).trim(), 'python');

  // Copy copies the code as written, not the colouring.
  await reply.locator('.copy-code').click();
  await reply.locator('.copy-code', { hasText: 'Copied' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `${CODE}\n`);

  // Long lines scroll inside the block (no wrapping), on a phone too, and the page itself does not.
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 800 });
    const box = await code.evaluate((c) => {
      const pre = c.closest('pre');
      return { ws: getComputedStyle(pre).whiteSpace, scroll: pre.scrollWidth, client: pre.clientWidth, page: document.documentElement.scrollWidth };
    });
    assert.equal(box.ws, 'pre');
    assert.ok(box.scroll > box.client, `the long line scrolls at ${width}px: ${JSON.stringify(box)}`);
    assert.ok(box.page <= width, `the page does not scroll sideways at ${width}px: ${JSON.stringify(box)}`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });

  // Both themes: the keyword's colour differs and reads well on the block's background.
  await chooseTheme(page, 'light');
  const light = await keywordColours(code);
  await chooseTheme(page, 'dark');
  const dark = await keywordColours(code);
  assert.notEqual(light.keyword, dark.keyword, 'the keyword is coloured per theme');
  assert.notEqual(light.background, dark.background);
  for (const [name, c] of Object.entries({ light, dark })) {
    assert.notEqual(c.keyword, c.text, `${name}: the keyword has a colour of its own`);
    assert.ok(contrast(c.keyword, c.background) >= 4.5, `${name}: ${c.keyword} on ${c.background} is readable`);
  }

  // The theme survives a reload, and the block is coloured again when the session is opened.
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
  await page.reload();
  await ready(page);
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
  assert.equal(await page.locator('.theme-toggle').getAttribute('aria-label'), 'Theme: dark');
  await page.locator('.session', { hasText: 'hl-plain' }).first().click();
  await code.waitFor({ timeout: 20_000 });
  assert.deepEqual(await keywordColours(code), dark);

  // The service worker does not fetch it at install, but keeps it once the app has: offline, the block
  // is still coloured, from the service worker's cache.
  const worker = await (await fetch(new URL('sw.js', app.server.url))).text();
  const name = fetched[0].split('/').pop();
  assert.ok(!worker.match(/const FILES = \[.*\];/)[0].includes(name), 'not precached at install');
  assert.ok(worker.match(/const LAZY = \[.*\]/)[0].includes(name), 'kept when first used');
  const served = [];
  page.on('response', (r) => HIGHLIGHTER.test(new URL(r.url()).pathname) && served.push(r.fromServiceWorker()));
  await app.browser.context.setOffline(true);
  try {
    await page.reload();
    await ready(page);
    await page.locator('.session', { hasText: 'hl-plain' }).first().click();
    await code.waitFor({ timeout: 20_000 });
    assert.deepEqual(served, [true], 'offline, the service worker served it');
  } finally {
    await app.browser.context.setOffline(false);
  }
  await page.locator('.theme-toggle').click(); // dark → the system's theme, for the next tests
  assert.equal(await page.locator('.theme-toggle').getAttribute('aria-label'), 'Theme: system');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('code from the model cannot become markup; unknown languages stay plain', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  const html = '<script>window.__pwned = 1</script>\n<img src="x" onerror="window.__pwned = 2">';
  await send(page, `[[code:html]]\n${html}`);
  const code = page.locator('.turn[data-role="assistant"] pre > code.language-html[data-highlight="done"]');
  await code.waitFor({ timeout: 20_000 });
  await replyDone(page);
  assert.equal(await code.locator('script, img').count(), 0, 'no element but the highlighter’s spans');
  assert.equal(await code.locator(':not(span)').count(), 0);
  assert.ok(await code.locator('.hljs-tag').count() >= 2, 'the tags are coloured as text');
  assert.equal(await code.textContent(), `${html}\n`);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);

  await send(page, '[[code:brainfuck]]\n++[>+<-]');
  const plain = page.locator('.turn[data-role="assistant"] pre > code.language-brainfuck[data-highlight="plain"]');
  await plain.waitFor({ timeout: 20_000 });
  await replyDone(page);
  assert.equal(await plain.locator('span').count(), 0);
  assert.equal(await plain.textContent(), '++[>+<-]\n');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('when the highlighter cannot be loaded, code stays plain and readable, and it is said once', async () => {
  const browser = await launchBrowser({ options: { serviceWorkers: 'block' } });
  try {
    const page = await openPage(browser.context, app.server.url);
    const warnings = [];
    page.on('console', (m) => m.type() === 'warning' && warnings.push(m.text()));
    await page.route(HIGHLIGHTER, (route) => route.abort('internetdisconnected'));
    await ready(page);
    await send(page, '[[code:python]]\ndef f():\n    return 1');
    const code = page.locator('.turn[data-role="assistant"] pre > code.language-python[data-highlight="plain"]');
    await code.waitFor({ timeout: 20_000 });
    await replyDone(page);
    await send(page, '[[code:rust]]\nfn main() {}');
    await page.locator('.turn[data-role="assistant"] pre > code.language-rust[data-highlight="plain"]').waitFor({ timeout: 20_000 });
    await replyDone(page);
    assert.equal(await code.textContent(), 'def f():\n    return 1\n');
    assert.equal(await code.locator('span').count(), 0);
    assert.equal((await page.locator('.code-lang').first().innerText()).trim(), 'python', 'still labelled');
    assert.equal(warnings.filter((w) => w.includes('without colours')).length, 1, `said once: ${warnings}`);
    // The browser's own line about the failed request, once; nothing else.
    assert.deepEqual(page.problems, ['console.error: Failed to load resource: net::ERR_INTERNET_DISCONNECTED']);
    await page.close();
  } finally {
    await browser.close();
  }
});

test('the live region says the finished reply once, not each delta', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  assert.equal(await page.locator('.turns').getAttribute('aria-live'), null, 'the conversation is not a live region');
  const region = page.getByRole('status').and(page.locator('.reply-announcer'));
  await page.evaluate(() => {
    window.__said = [];
    const region = document.querySelector('.reply-announcer');
    new MutationObserver(() => window.__said.push(region.textContent.trim())).observe(region, {
      childList: true, characterData: true, subtree: true,
    });
  });
  await send(page, '[[code:python]] print("slowly, in many pieces of a few words each") [[fault:slow]]');
  await page.locator('.turn-text[aria-live="off"]').waitFor({ timeout: 20_000 }); // streaming
  await replyDone(page);
  await region.filter({ hasText: 'Reply:' }).waitFor();
  const said = (await page.evaluate(() => window.__said)).filter((s) => s !== '');
  assert.deepEqual(said, ['Reply: Here it is as python:\nprint("slowly, in many pieces of a few words each")\nThat is the whole block.']);
  assert.equal(await region.getAttribute('aria-live'), 'polite');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('dates follow the browser context’s time zone (a day apart either side of the date line)', async () => {
  // 10:30 UTC on 10 March 2024 is 00:30 on 11 March in Kiritimati (UTC+14) and 03:30 on 10 March in
  // Los Angeles (PDT, UTC−7).
  const AT = Date.parse('2024-03-10T10:30:00Z');
  const dir = mkdtempSync(join(tmpdir(), 'cowork-zones-'));
  const id = randomUUID();
  const lines = [
    { type: 'header', format: 'cowork-archive', version: 1 },
    { type: 'session', id, workspace: 'zones', title: 'zones-session at the date line', model: 'demo', system_prompt: '',
      created_at: AT, last_active_at: AT, turn_count: 1, prompt_tokens: 0, completion_tokens: 0, state: {},
      parent_session_id: null, fork_turn: null, is_archived: false },
    { type: 'turn', session_id: id, turn_number: 1, role: 'user', content: 'what day is it?', tool_calls: [],
      tool_call_id: null, tool_name: null, token_count: 4, status: 'complete', created_at: AT, metadata: {} },
    { type: 'end', sessions: 1, turns: 1 },
  ];
  const file = join(dir, 'zones.jsonl');
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  try {
    const shown = {};
    for (const zone of ['Pacific/Kiritimati', 'America/Los_Angeles']) {
      const browser = await launchBrowser({ options: { locale: 'en-US', timezoneId: zone } });
      try {
        const page = await openPage(browser.context, app.server.url);
        await ready(page);
        await importFile(page, file, 1);
        const meta = page.locator('.session-row', { hasText: 'zones-session' }).locator('.session-meta');
        await meta.waitFor();
        const expected = await page.evaluate(
          ([ms, timeZone]) => ({
            date: new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone }).format(ms),
            full: new Intl.DateTimeFormat('en-US', { dateStyle: 'full', timeStyle: 'short', timeZone }).format(ms),
            zone: Intl.DateTimeFormat().resolvedOptions().timeZone,
          }),
          [AT, zone],
        );
        assert.equal(expected.zone, zone, 'the context runs in the zone');
        const text = (await meta.innerText()).trim();
        assert.ok(text.endsWith(`· ${expected.date}`), `${zone}: "${text}" ends with ${expected.date}`);
        assert.equal(await meta.getAttribute('title'), expected.full);
        shown[zone] = expected.full;
        assert.deepEqual(page.problems, []);
      } finally {
        await browser.close();
      }
    }
    assert.match(shown['Pacific/Kiritimati'], /March 11, 2024 at 12:30/);
    assert.match(shown['America/Los_Angeles'], /March 10, 2024 at 3:30/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// A large paste (issue #34): 3 MB of text pasted into the composer lands there whole, and the message
// sent is that text verbatim: saved in the archive as it was pasted, and received by the model as it
// was pasted (the demo model's `[[digest]]` switch answers with the count and FNV-1a of what follows
// it). The paste is the bench's synthetic one (tests/bench/paste.mjs): a `paste` event carrying the
// text, then what the browser does by default (the selection replaced, an `input` event), not
// Playwright's `fill`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useServerAndBrowser, openPage, ready, replyDone, exportArchive, openSettings } from '../harness.js';
import { pasteText } from '../../bench/paste.mjs';

const app = useServerAndBrowser();

/** FNV-1a (64-bit) of the UTF-8 bytes of `text`, as the demo model's `[[digest]]` reports it. */
function fnv1a64(text) {
  let h = 0xcbf29ce484222325n;
  for (const b of Buffer.from(text, 'utf8')) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h.toString(16).padStart(16, '0');
}

test('3 MB of pasted text lands whole in the composer and is sent verbatim', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  // A window that holds the message (3 MB is about 750,000 tokens at the default estimate).
  const settings = await openSettings(page, 'Providers');
  await settings.getByText(/^Advanced/).click();
  await settings.getByLabel('Context window (tokens)').fill('2000000');
  await settings.getByRole('button', { name: 'Save' }).click();
  await settings.waitFor({ state: 'detached' });
  await page.getByRole('button', { name: '+ New session' }).click();

  const text = pasteText(3_000_000) + 'the end ✓ ünïcödé\n';
  const box = page.getByLabel('Message', { exact: true });
  await box.fill('[[digest]]');
  const held = await box.evaluate((el, text) => {
    el.setSelectionRange(el.value.length, el.value.length);
    const data = new DataTransfer();
    data.setData('text/plain', text);
    const ev = new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true });
    el.dispatchEvent(ev);
    if (!ev.defaultPrevented) {
      // The browser's default action, as in the bench: the selection replaced, one `input` event.
      el.setRangeText(text, el.selectionStart, el.selectionEnd, 'end');
      el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertFromPaste' }));
    }
    return { whole: el.value === `[[digest]]${text}`, length: el.value.length };
  }, text);
  assert.deepEqual(held, { whole: true, length: '[[digest]]'.length + text.length }, 'the paste is whole in the box');
  // The box is not left at one line: it grew to its largest height and scrolls (two frames later: it
  // may be measured in the next one).
  const [height, scroll] = await box.evaluate(async (el) => {
    await new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
    return [el.clientHeight, el.scrollHeight];
  });
  assert.ok(height > 60 && scroll > height, `the box grew (${height} px) and scrolls (${scroll} px of text)`);

  await box.press('Enter');
  const expected = `Received ${[...text].length} characters, FNV-1a 64 ${fnv1a64(text)}.`;
  const reply = page.locator('.turn[data-role="assistant"]', { hasText: 'Received' });
  await reply.or(page.locator('.notice')).first().waitFor({ timeout: 120_000 });
  assert.equal(await page.locator('.notice').count(), 0, `no notice: ${await page.locator('.notice').allInnerTexts()}`);
  await replyDone(page);
  assert.equal((await reply.locator('.turn-text').innerText()).trim(), expected, 'the model got the text verbatim');
  assert.equal(await box.inputValue(), '', 'the box is emptied after the send');

  const lines = await exportArchive(page);
  const user = lines.filter((l) => l.type === 'turn' && l.role === 'user').at(-1);
  assert.ok(user.content === `[[digest]]${text}`, `the archive holds the message as pasted (${user.content.length} characters)`);
  assert.deepEqual(page.problems, []);
});

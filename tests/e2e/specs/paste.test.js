// A large paste (issue #34): 3 MB of text pasted into the composer is attached whole as a text file
// ("Pasted text.txt", a chip the user can remove) instead of going into the box, and the message sent
// carries it verbatim: kept in the archive byte for byte, and received by the model whole, in a fence
// headed by the file's name (the demo model's `[[digest]]` switch answers with the count and FNV-1a of
// what follows it). A short paste still goes into the box. The paste is the bench's synthetic one
// (tests/bench/paste.mjs): a `paste` event carrying the text, then, unless the app took it, what the
// browser does by default (the selection replaced, an `input` event), not Playwright's `fill`.
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

/** Pastes `text` into the box at its end as the browser would; whether the app took the paste. */
async function paste(box, text) {
  return box.evaluate((el, text) => {
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
    return ev.defaultPrevented;
  }, text);
}

test('3 MB of pasted text is attached whole as a text file and sent verbatim; a short paste goes into the box', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  // A window that holds the message (3 MB is about 750,000 tokens at the default estimate).
  const settings = await openSettings(page, 'Providers');
  await settings.getByText(/^Advanced/).click();
  await settings.getByLabel('Context window (tokens)').fill('2000000');
  await settings.getByRole('button', { name: 'Save' }).click();
  await settings.waitFor({ state: 'detached' });
  await page.getByRole('button', { name: '+ New session' }).click();

  const box = page.getByLabel('Message', { exact: true });
  const short = 'fn main() {\n    println!("hi");\n}\n';
  assert.equal(await paste(box, short), false, 'a short paste is left to the browser');
  assert.equal(await box.inputValue(), short, 'a short paste goes into the box');
  await box.fill('[[digest]]');

  const text = pasteText(3_000_000) + 'the end ✓ ünïcödé\n';
  const bytes = Buffer.byteLength(text, 'utf8');
  assert.equal(await paste(box, text), true, 'the app takes a long paste');
  const chip = page.locator('.attachment-chips.pending .attachment-chip');
  await chip.waitFor();
  assert.equal(await chip.locator('.attachment-name').innerText(), 'Pasted text.txt');
  assert.equal(await chip.locator('.attachment-size').innerText(), `${(bytes / 1048576).toFixed(1)} MB`);
  assert.equal(await box.inputValue(), '[[digest]]', 'the box keeps what was typed, without the pasted text');

  await box.press('Enter');
  // What follows the switch, as the model gets it: the file in a fence headed by its name (core's
  // context/attachments.rs `fenced`; the text's longest run of backticks is one).
  const sent = `\n\n[file: Pasted text.txt, ${(bytes / 1048576).toFixed(1)} MB, text/plain]\n\`\`\`\n${text}\`\`\``;
  const expected = `Received ${[...sent].length} characters, FNV-1a 64 ${fnv1a64(sent)}.`;
  const reply = page.locator('.turn[data-role="assistant"]', { hasText: 'Received' });
  await reply.or(page.locator('.notice')).first().waitFor({ timeout: 120_000 });
  assert.equal(await page.locator('.notice').count(), 0, `no notice: ${await page.locator('.notice').allInnerTexts()}`);
  await replyDone(page);
  assert.equal((await reply.locator('.turn-text').innerText()).trim(), expected, 'the model got the text verbatim');
  assert.equal(await box.inputValue(), '', 'the box is emptied after the send');
  assert.equal(await chip.count(), 0, 'the chip went with the message');

  const lines = await exportArchive(page);
  const user = lines.filter((l) => l.type === 'turn' && l.role === 'user').at(-1);
  assert.equal(user.content, '[[digest]]');
  const blob = lines.find((l) => l.type === 'blob' && l.size === bytes);
  assert.ok(blob, 'the pasted text is in the export as a blob of its size');
  assert.ok(Buffer.from(blob.data, 'base64').toString('utf8') === text, 'the archive holds the pasted text byte for byte');
  assert.deepEqual(page.problems, []);
});

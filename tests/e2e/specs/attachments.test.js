// Attachments (issue #21): a pasted screenshot and a dropped .py file go in one message, the demo model
// describes what it received, both are shown again after a reload and after the JSONL export is
// imported into a fresh browser (byte for byte: SHA-256 of what the UI downloads), and Ctrl+K finds a
// word that appears only inside the .py file. The same image in two sessions is stored once; a file
// over the limit, a hostile file name and an SVG are handled safely.
//
// Files are made by this test (a PNG encoded here) and handed to the page as a synthetic paste, a
// synthetic drop and through the Attach button's file input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useServerAndBrowser, launchBrowser, openPage, ready, replyDone, send, exportArchive, importFile, png } from '../harness.js';

const app = useServerAndBrowser();
const dir = mkdtempSync(join(tmpdir(), 'cowork-attachments-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));


const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
const file = (name, type, bytes) => ({ name, type, b64: Buffer.from(bytes).toString('base64') });

/** Pastes `files` into the message box, as a screenshot pasted from the clipboard arrives. */
async function paste(page, files) {
  await page.getByLabel('Message', { exact: true }).evaluate((box, files) => {
    const data = new DataTransfer();
    for (const f of files) data.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name, { type: f.type }));
    box.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, files);
}

/** Drags `files` over the conversation (checking the drop target shows) and drops them. */
async function drop(page, files) {
  const pane = page.locator('main.conversation');
  const data = await page.evaluateHandle((files) => {
    const data = new DataTransfer();
    for (const f of files) data.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name, { type: f.type }));
    return data;
  }, files);
  await pane.dispatchEvent('dragenter', { dataTransfer: data });
  await pane.dispatchEvent('dragover', { dataTransfer: data });
  await page.locator('.drop-zone', { hasText: 'Drop the files to attach them' }).waitFor();
  await pane.dispatchEvent('drop', { dataTransfer: data });
  await page.locator('.drop-zone').filter({ hasText: 'Drop' }).waitFor({ state: 'detached' });
}

/** Downloads what `click` starts; resolves to the file's name and its bytes' SHA-256. */
async function download(page, click) {
  const [d] = await Promise.all([page.waitForEvent('download'), click()]);
  return { name: d.suggestedFilename(), sha: sha256(await readFile(await d.path())) };
}

/** The image of the user turn `turn`, opened full size and downloaded (then closed with Esc). */
async function downloadImage(page, turn, name) {
  await turn.getByRole('button', { name: `View ${name} full size` }).click();
  const box = page.getByRole('dialog', { name: `Image: ${name}` });
  await box.locator('img').evaluate((img) => img.decode());
  const got = await download(page, () => box.getByRole('link', { name: 'Download' }).click());
  await page.keyboard.press('Escape');
  await box.waitFor({ state: 'detached' });
  return got;
}

/** Waits until the turn's thumbnail has loaded and resolves to its pixel size. */
async function thumbnailSize(turn) {
  const img = turn.locator('img.attachment-thumb');
  await img.waitFor();
  return img.evaluate(async (i) => {
    await i.decode();
    return `${i.naturalWidth}×${i.naturalHeight}`;
  });
}

test('a pasted image and a dropped .py in one message: described, kept, exported and imported byte for byte, found by search', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  const shot = png(64, 48, 1);
  const script = Buffer.from('# tallies the marsupials\ndef quokka_tally(n):\n    return n * 2\n');
  await paste(page, [file('image.png', 'image/png', shot)]);
  await drop(page, [file('script.py', 'text/x-python', script)]);
  const chips = page.locator('.composer .attachment-chip');
  await chips.nth(1).waitFor();
  assert.deepEqual(await chips.locator('.attachment-name').allInnerTexts(), ['image.png', 'script.py']);
  await chips.first().locator('img.attachment-thumb-small').waitFor();
  assert.equal(await page.getByRole('list', { name: 'Attachments to send with the message' }).count(), 1);

  await send(page, 'Here is the screenshot and the counting script');
  const reply = page.locator('.turn[data-role="assistant"]', { hasText: 'I received' });
  await reply.waitFor({ timeout: 20_000 });
  await replyDone(page);
  assert.match(await reply.innerText(), /I received 1 image \(64×48, [\d.]+ (B|KB)\) and 1 file: script\.py \(\d+ B\)/);
  assert.equal(await chips.count(), 0, 'the composer is cleared once the message is saved');

  const user = page.locator('.turn[data-role="user"]').first();
  const check = async (page, user) => {
    assert.equal(await thumbnailSize(user), '64×48');
    const image = await downloadImage(page, user, 'image.png');
    assert.deepEqual(image, { name: 'image.png', sha: sha256(shot) });
    const py = await download(page, () => user.getByRole('link', { name: /script\.py/ }).click());
    assert.deepEqual(py, { name: 'script.py', sha: sha256(script) });
  };
  await check(page, user);

  // Reload: both are still shown.
  await page.reload();
  await ready(page);
  await page.locator('.session', { hasText: 'Here is the screenshot' }).click();
  await check(page, page.locator('.turn[data-role="user"]').first());

  // Ctrl+K finds a word only the .py holds, names the file, and opens the turn that carried it.
  await page.keyboard.press('Control+k');
  const box = page.getByRole('combobox', { name: 'Search all sessions' });
  await box.fill('quokka_tally');
  const hit = page.locator('.hit').filter({ has: page.locator('mark') }).first();
  await hit.waitFor({ timeout: 10_000 });
  assert.match(await hit.innerText(), /turn 1 · user/);
  assert.match(await hit.innerText(), /script\.py/);
  await box.press('Enter');
  await page.locator('.turn.focused[data-turn="1"] .attachment-file', { hasText: 'script.py' }).waitFor({ timeout: 10_000 });

  // Export, import into a fresh browser: the same bytes.
  const lines = await exportArchive(page);
  const blobs = lines.filter((l) => l.type === 'blob').map((b) => b.sha256).sort();
  assert.deepEqual(blobs, [sha256(shot), sha256(script)].sort());
  const exported = join(dir, 'archive.jsonl');
  await writeFile(exported, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const sessions = lines.filter((l) => l.type === 'session').length;
  assert.deepEqual(page.problems, []);
  await page.close();

  const fresh = await launchBrowser();
  try {
    const other = await openPage(fresh.context, app.server.url);
    await ready(other);
    await importFile(other, exported, sessions);
    await other.locator('.session', { hasText: 'Here is the screenshot' }).click();
    await check(other, other.locator('.turn[data-role="user"]').first());
    assert.deepEqual(other.problems, []);
  } finally {
    await fresh.close();
  }
});

test('the same image attached in two sessions is stored once', async () => {
  const fresh = await launchBrowser();
  try {
    const page = await openPage(fresh.context, app.server.url);
    await ready(page);
    const logo = png(32, 32, 9);
    // By the Attach button's file picker, then by pasting it in a second session.
    await page.locator('.composer input[type=file]').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: logo });
    await page.locator('.composer .attachment-chip', { hasText: 'logo.png' }).waitFor();
    // Files alone are a message: Send is enabled with no text.
    assert.equal(await page.getByRole('button', { name: 'Send' }).isEnabled(), true);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('.turn[data-role="assistant"]', { hasText: 'I received 1 image (32×32' }).waitFor({ timeout: 20_000 });
    await replyDone(page);
    await page.getByRole('button', { name: '+ New session' }).click();
    await paste(page, [file('same-logo.png', 'image/png', logo)]);
    await page.locator('.composer .attachment-chip', { hasText: 'same-logo.png' }).waitFor();
    await send(page, 'the logo again');
    await page.locator('.turn[data-role="assistant"]', { hasText: 'I received 1 image (32×32' }).waitFor({ timeout: 20_000 });
    await replyDone(page);
    await page.locator('.storage-usage').click();
    const stats = page.locator('.storage-stats');
    await stats.filter({ hasText: 'attachment' }).waitFor();
    const kb = (logo.length / 1024).toFixed(1);
    assert.ok(logo.length > 1024, 'the size below is in KB');
    assert.match(await stats.innerText(), new RegExp(`^2 sessions · 4 turns · 1 attachment stored once each \\(${kb} KB\\)`));
    assert.deepEqual(page.problems, []);
  } finally {
    await fresh.close();
  }
});

test('a file over the limit is refused naming the limit; hostile names are shown safely; an SVG is never markup', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  const box = page.getByLabel('Message', { exact: true });
  await box.fill('my unsent draft');
  await paste(page, [file('keep.txt', 'text/plain', Buffer.from('kept'))]);
  await page.locator('.composer .attachment-chip', { hasText: 'keep.txt' }).waitFor();

  // 21 MB, made in the page (the default limit is 20 MB per file).
  await box.evaluate((box) => {
    const data = new DataTransfer();
    data.items.add(new File([new Uint8Array(21 * 1024 * 1024)], 'huge-dump.bin', { type: 'application/octet-stream' }));
    box.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  });
  const notice = page.locator('.notice', { hasText: 'huge-dump.bin' });
  await notice.waitFor();
  assert.match(await notice.innerText(), /huge-dump\.bin is 21\.0 MB and cannot be attached: the limit is 20\.0 MB per file/);
  assert.equal(await box.inputValue(), 'my unsent draft');
  assert.deepEqual(await page.locator('.composer .attachment-name').allInnerTexts(), ['keep.txt']);
  // The limit is the user's: raised in Settings, the same file is taken.
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  const settings = page.getByRole('dialog', { name: 'Settings' });
  assert.equal(await settings.getByLabel('Largest attachment (MB per file)').inputValue(), '20');
  await settings.getByText(/^Advanced/).click(); // the numbers are folded away
  await settings.getByLabel('Largest attachment (MB per file)').fill('30');
  await settings.getByRole('button', { name: 'Save' }).click();
  await settings.waitFor({ state: 'detached' });
  await box.evaluate((box) => {
    const data = new DataTransfer();
    data.items.add(new File([new Uint8Array(21 * 1024 * 1024)], 'huge-dump.bin', { type: 'application/octet-stream' }));
    box.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  });
  await page.locator('.composer .attachment-chip', { hasText: 'huge-dump.bin' }).waitFor();
  await page.getByRole('button', { name: 'Remove huge-dump.bin' }).click();
  assert.deepEqual(await page.locator('.composer .attachment-name').allInnerTexts(), ['keep.txt']);
  await page.getByRole('button', { name: 'Remove keep.txt' }).click();
  assert.equal(await page.locator('.composer .attachment-chip').count(), 0);

  // A name with directories, control characters and 500 characters; an SVG with a script in it.
  const long = `..\\..\\evil\u0007\u202e/${'n'.repeat(500)}.txt`;
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" onload="window.__svgRan=1" width="10" height="10"><script>window.__svgRan=2</script><circle r="5"/></svg>';
  await paste(page, [file(long, 'text/plain', Buffer.from('hello')), file('pic.svg', 'image/svg+xml', Buffer.from(svg))]);
  const names = page.locator('.composer .attachment-name');
  await names.nth(1).waitFor();
  const shown = await names.first().innerText();
  const title = await names.first().getAttribute('title');
  for (const s of [shown, title]) {
    assert.ok(!/[\\/\u0000-\u001f\u202e]/.test(s) && s.length <= 120 && s.endsWith('.txt'), `shown safely: ${JSON.stringify(s)}`);
  }
  assert.equal(await page.locator('.composer img').count(), 0, 'an SVG gets no preview');
  await box.fill('two odd files');
  await box.press('Enter');
  await page.locator('.turn[data-role="assistant"]', { hasText: 'I received 2 files' }).waitFor({ timeout: 20_000 });
  await replyDone(page);
  const user = page.locator('.turn[data-role="user"]').last();
  assert.deepEqual(await user.locator('.attachment-file .attachment-name').allInnerTexts(), [shown, 'pic.svg']);
  assert.equal(await user.locator('svg, img, object, iframe, embed').count(), 0, 'the SVG is a file chip, not markup');
  const pic = await download(page, () => user.getByRole('link', { name: /pic\.svg/ }).click());
  assert.deepEqual(pic, { name: 'pic.svg', sha: sha256(Buffer.from(svg)) });
  assert.equal(await page.evaluate(() => window.__svgRan), undefined);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('at phone width the chips wrap and the composer does not overflow', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await page.setViewportSize({ width: 360, height: 740 });
  await ready(page);
  await paste(page, ['a', 'b', 'c', 'd'].map((n) => file(`${n}-a-rather-long-attachment-name-for-a-phone.log`, 'text/plain', Buffer.from(n))));
  await page.locator('.composer .attachment-chip').nth(3).waitFor();
  const widths = await page.evaluate(() => {
    const c = document.querySelector('.composer');
    return { scroll: c.scrollWidth, client: c.clientWidth, page: document.documentElement.scrollWidth };
  });
  assert.ok(widths.scroll <= widths.client && widths.page <= 360, JSON.stringify(widths));
  assert.deepEqual(page.problems, []);
  await page.close();
});

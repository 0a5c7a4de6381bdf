// The phone (issue #32): at 390×844 with touch emulation a person sends, attaches, switches model,
// opens a session from the drawer, edits and regenerates, and opens every dialog; every interactive
// target is at least 44×44 px and nothing is cut off or sticks out sideways (also at 360 px wide).
// The lightbox fills the screen: a 960 px image at its size on a desktop, scaled to a phone's width.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, openPage, ready, replyDone, setOrchestratorDir, projectDir, png } from '../harness.js';

const PHONE = { width: 390, height: 844 };
const app = {};
before(async () => {
  app.server = await startServer();
  app.browser = await launchBrowser({ options: { viewport: PHONE, hasTouch: true, isMobile: true } });
});
after(async () => {
  await app.browser?.close();
  await app.server?.stop();
});


/**
 * Every visible interactive target inside `root` (a selector; the whole page by default) that is
 * smaller than 44×44 px or sticks out of the viewport sideways, and whether `root` itself overflows
 * sideways; each as a line that names the element. A checkbox is measured by its label (where the
 * tap lands); a link inside a sentence is not a target of its own.
 */
async function problems(page, root = 'body') {
  return page.evaluate((root) => {
    const out = [];
    const scope = document.querySelector(root);
    if (!scope) return [`${root}: not in the page`];
    const W = window.innerWidth;
    if (document.documentElement.scrollWidth > W) out.push(`the page is ${document.documentElement.scrollWidth}px wide`);
    if (scope.scrollWidth > scope.clientWidth + 1) out.push(`${root} scrolls sideways (${scope.scrollWidth} > ${scope.clientWidth})`);
    const name = (el) => `${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : ''} "${(el.getAttribute('aria-label') || el.textContent || el.getAttribute('placeholder') || '').trim().slice(0, 30)}"`;
    const all = scope.querySelectorAll('button, a[href], input, select, textarea, summary, [role="button"]');
    for (const el of all) {
      if (el.type === 'file' || el.closest('.visually-hidden, [hidden], [inert]')) continue;
      // A link in a sentence of a reply is sized by its text (WCAG 2.5.8 exempts inline targets).
      if (el.tagName === 'A' && el.closest('.markdown p, .markdown li, .markdown td')) continue;
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden' || style.display === 'none') continue;
      const target = el.type === 'checkbox' || el.type === 'radio' ? el.closest('label') ?? el : el;
      const r = target.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue; // not rendered (in a closed <details>, …)
      if (r.width < 43.5 || r.height < 43.5) out.push(`${name(el)} is ${Math.round(r.width)}×${Math.round(r.height)}`);
      if (r.left < -0.5 || r.right > W + 0.5) out.push(`${name(el)} is cut off (${Math.round(r.left)}…${Math.round(r.right)} of ${W})`);
    }
    return out;
  }, root);
}

/** Asserts what `problems` finds is nothing. */
async function fits(page, what, root) {
  assert.deepEqual(await problems(page, root), [], `${what}: every target ≥ 44×44 px, nothing cut off`);
}

/** Whether the element is shown: laid out, not hidden, and not transparent. */
const shown = (locator) => locator.evaluate((el) => {
  for (let e = el; e; e = e.parentElement) if (getComputedStyle(e).opacity === '0') return false;
  const r = el.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden';
});

async function sendByTouch(page, text) {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send' }).tap();
}

test('a phone: drawer, model name, one-line composer, attach, switch model, edit, regenerate — all by touch, all ≥ 44 px', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  assert.ok(await page.evaluate(() => matchMedia('(hover: none)').matches), 'the emulated phone has no hover');

  // The header: Sessions, the model's name in the middle (never a bare "▾"), "?" still there.
  const model = page.locator('.model-button');
  assert.match(await model.innerText(), /demo model/, 'the model button names the model');
  assert.ok(await page.getByRole('button', { name: 'Keyboard shortcuts' }).isVisible(), '"?" is reachable on a phone');
  const [toggle, modelBox, help] = await Promise.all([
    page.getByRole('button', { name: 'Sessions' }).boundingBox(), model.boundingBox(),
    page.getByRole('button', { name: 'Keyboard shortcuts' }).boundingBox(),
  ]);
  assert.ok(Math.abs(modelBox.x + modelBox.width / 2 - PHONE.width / 2) < 24, `the model is the centre control: ${JSON.stringify(modelBox)}`);
  assert.ok(toggle.y === modelBox.y || Math.abs(toggle.y + toggle.height / 2 - (modelBox.y + modelBox.height / 2)) < 4, 'in one row with Sessions');
  assert.ok(help.x > modelBox.x + modelBox.width - 1, '"?" on its right');
  await fits(page, 'the empty app');

  // The composer: one line, its placeholder on one line, Attach and Send inside its box; it grows
  // with its text up to a limit, then scrolls.
  const box = page.getByLabel('Message', { exact: true });
  const oneLine = await box.evaluate((t) => ({ h: t.clientHeight, fits: t.scrollHeight <= t.clientHeight + 1 }));
  assert.ok(oneLine.h <= 48 && oneLine.fits, `one line, placeholder included: ${JSON.stringify(oneLine)}`);
  const within = await page.locator('.composer-box').evaluate((b) => ['Attach files', 'Send'].map((n) => !!b.querySelector(`[aria-label="${n}"]`)));
  assert.deepEqual(within, [true, true], 'Attach files and Send are icon buttons inside the box');
  // The box is measured in the frame after its text changes: wait (2 s at most) for it to grow.
  const settled = (done, h) => box.evaluate((t, [grow, h]) => new Promise((ok) => {
    const start = performance.now();
    const look = () => ((grow ? t.clientHeight > h : t.clientHeight <= h) || performance.now() - start > 2000
      ? ok(t.clientHeight) : requestAnimationFrame(look));
    look();
  }), [done, h]);
  const grown = (above) => settled(true, above);
  await box.fill('one\ntwo\nthree');
  const three = await grown(oneLine.h + 30);
  assert.ok(three > oneLine.h + 30, `three lines make it taller (${oneLine.h} → ${three})`);
  await box.fill(Array.from({ length: 60 }, (_, i) => `line ${i}`).join('\n'));
  await grown(three);
  const capped = await box.evaluate((t) => ({ h: t.clientHeight, scrolls: t.scrollHeight > t.clientHeight }));
  assert.ok(capped.h <= 0.45 * PHONE.height && capped.scrolls, `capped, then it scrolls: ${JSON.stringify(capped)}`);
  await box.fill('');
  assert.equal(await settled(false, oneLine.h), oneLine.h, 'emptied, one line again');

  // Send, with a file attached by the Attach button.
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Attach files' }).tap()]);
  await chooser.setFiles({ name: 'auth.py', mimeType: 'text/x-python', buffer: Buffer.from('def login():\n    return True\n') });
  await page.locator('.composer .attachment-chip', { hasText: 'auth.py' }).waitFor();
  await fits(page, 'a file waiting in the composer');
  await sendByTouch(page, 'Please review this file.');
  await page.locator('.turn[data-role="assistant"]').first().waitFor({ timeout: 20_000 });
  await replyDone(page);
  // The sent .py file is a compact card: its type's icon, its name and its size.
  const card = page.locator('.turn[data-role="user"] .attachment-chip.file').first();
  const cardBox = await card.boundingBox();
  assert.ok(cardBox.height <= 60, `a compact card, not a tall box: ${cardBox.height}px`);
  assert.equal(await card.locator('.icon.icon-code-file').count(), 1, 'with the icon of a code file (not a glyph the font may lack)');
  assert.match(await card.innerText(), /auth\.py\s+\d+ B/);

  // The message actions show without hover, under the user's message and under the reply.
  const user = page.locator('.turn[data-role="user"]').first();
  const reply = page.locator('.turn[data-role="assistant"]').last();
  for (const [turn, names] of [[user, ['Copy', 'Edit', 'Fork from here']], [reply, ['Copy', 'Regenerate', 'Fork from here']]]) {
    for (const name of names) assert.ok(await shown(turn.getByRole('button', { name, exact: true })), `${name} shows without hover`);
  }
  // Told apart at a glance: the user's turn a bubble on the right, the reply full width.
  const [bubble, answer] = await Promise.all([user.locator('.turn-body').boundingBox(), reply.locator('.turn-body').boundingBox()]);
  assert.ok(bubble.x + bubble.width > PHONE.width - 30 && bubble.x > 30, `the user's bubble sits on the right: ${JSON.stringify(bubble)}`);
  assert.ok(answer.width > PHONE.width - 50, `the reply runs the full width: ${JSON.stringify(answer)}`);
  await fits(page, 'a conversation');

  // Switch model from the header.
  await model.tap();
  const menu = page.getByRole('dialog', { name: 'Model for this session' });
  await menu.waitFor();
  await fits(page, 'the model menu', '.model-menu');
  await menu.locator('select.model-select').waitFor({ timeout: 20_000 });
  await menu.locator('select.model-select').selectOption('demo-large');
  await menu.getByRole('button', { name: 'Done' }).tap();
  assert.match(await model.innerText(), /demo-large/);
  await sendByTouch(page, 'And now the large model?');
  await page.locator('.turn[data-role="assistant"]', { hasText: 'Demo model "demo-large" here' }).waitFor({ timeout: 20_000 });
  await replyDone(page);

  // Edit the first message, then regenerate the last reply: each a new version.
  await user.getByRole('button', { name: 'Edit', exact: true }).tap();
  const edit = page.getByLabel('Edited message');
  await edit.fill('Please review this file, briefly.');
  await fits(page, 'the edit form', '.edit-box');
  await page.getByRole('button', { name: 'Send as a new version' }).tap();
  await page.locator('.turn[data-role="user"]', { hasText: 'briefly' }).waitFor({ timeout: 20_000 });
  await replyDone(page);
  await page.locator('.turn[data-role="assistant"]').last().getByRole('button', { name: 'Regenerate' }).tap();
  await page.locator('.turn[data-role="assistant"] .branch-switch', { hasText: '2 / 2' }).waitFor({ timeout: 20_000 });
  await replyDone(page);
  await fits(page, 'a conversation with versions');

  // The drawer: it slides over the conversation with a backdrop; a tap beside it closes it, a
  // session chosen in it opens and closes it.
  await page.getByRole('button', { name: 'Sessions' }).tap();
  const drawer = page.locator('.sidebar');
  await drawer.waitFor();
  await page.waitForFunction(() => document.querySelector('.sidebar').getAnimations().length === 0); // slid in
  const d = await drawer.boundingBox();
  assert.ok(d.x >= 0 && d.x + d.width <= PHONE.width && d.width < PHONE.width, `a drawer over the page: ${JSON.stringify(d)}`);
  assert.ok(await page.locator('.drawer-backdrop').isVisible(), 'with a backdrop');
  await fits(page, 'the drawer', '.sidebar');
  await page.mouse.click(PHONE.width - 20, PHONE.height / 2); // beside the drawer
  await drawer.waitFor({ state: 'hidden' });
  // Opened, it takes the focus (a keyboard goes on inside it); Esc closes it (with a keyboard attached),
  // and the focus goes back to the button that opens it.
  await page.getByRole('button', { name: 'Sessions' }).tap();
  await drawer.waitFor();
  await page.waitForFunction(() => document.activeElement?.classList.contains('new-session'));
  await page.keyboard.press('Escape');
  await drawer.waitFor({ state: 'hidden' });
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Sessions', 'the focus is on the Sessions button');
  await page.getByRole('button', { name: 'Sessions' }).tap();
  await page.getByRole('button', { name: '+ New session' }).tap();
  await drawer.waitFor({ state: 'hidden' });
  await sendByTouch(page, 'A second conversation.');
  await replyDone(page);
  await page.getByRole('button', { name: 'Sessions' }).tap();
  await drawer.locator('.session', { hasText: 'Please review' }).first().tap();
  await drawer.waitFor({ state: 'hidden' });
  await page.locator('.turn[data-role="user"]', { hasText: 'Please review' }).waitFor();
  assert.equal(await page.locator('.turn', { hasText: 'A second conversation' }).count(), 0, 'the chosen session is open');
  await fits(page, 'a session opened from the drawer');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('every dialog fits a phone (390 and 360 px wide) and scrolls inside; the lightbox fills the screen', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await setOrchestratorDir(page, projectDir());
  await page.getByLabel('Message', { exact: true }).evaluate((t) => t.focus());
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Attach files' }).tap()]);
  await chooser.setFiles({ name: 'wide.png', mimeType: 'image/png', buffer: png(960, 600) });
  await page.locator('.composer .attachment-chip', { hasText: 'wide.png' }).waitFor();
  await sendByTouch(page, 'A wide picture.');
  await page.locator('.turn[data-role="assistant"]').first().waitFor({ timeout: 20_000 });
  await replyDone(page);

  for (const width of [390, 360]) {
    await page.setViewportSize({ width, height: PHONE.height });
    const open = async (what, how, root) => {
      await how();
      await page.locator(root).first().waitFor();
      const r = await page.locator(root).first().boundingBox();
      assert.ok(r.x >= 0 && r.x + r.width <= width + 0.5, `${what} at ${width}px: within the screen (${JSON.stringify(r)})`);
      await fits(page, `${what} at ${width}px`, root);
    };
    const close = async (root) => {
      await page.keyboard.press('Escape');
      await page.locator(root).first().waitFor({ state: 'detached' });
    };
    await open('Search', () => page.getByRole('button', { name: 'Search', exact: true }).tap(), '.dialog.search');
    await page.getByRole('combobox', { name: 'Search all sessions' }).fill('picture');
    await page.locator('.hit').first().waitFor();
    await fits(page, `Search with hits at ${width}px`, '.dialog.search');
    await close('.dialog.search');
    await open('Settings', () => page.getByRole('button', { name: 'Settings', exact: true }).tap(), '.overlay .dialog');
    // Sync is a section of Settings.
    await page.getByRole('tab', { name: 'Sync', exact: true }).tap();
    await page.locator('.sync-dialog').waitFor();
    await fits(page, `Settings → Sync at ${width}px`, '.overlay .dialog');
    await page.keyboard.press('Escape');
    await page.locator('.overlay').first().waitFor({ state: 'detached' });
    await open('Storage', () => page.locator('.storage-usage').tap(), '.dialog.storage');
    await close('.dialog.storage');
    await open('Keyboard shortcuts', () => page.getByRole('button', { name: 'Keyboard shortcuts' }).tap(), '.overlay .dialog');
    await close('.overlay .dialog');
    await open('the model menu', () => page.locator('.model-button').tap(), '.model-menu');
    await page.getByRole('button', { name: 'Done' }).tap();
    await open('the session panel', () => page.getByRole('button', { name: 'Session', exact: true }).tap(), '.session-panel');
    await page.getByRole('button', { name: 'Close the session panel' }).tap();
    const drawer = async (want) => {
      if ((await page.locator('.sidebar').isVisible()) !== want) await page.getByRole('button', { name: 'Sessions' }).tap();
      await page.locator('.sidebar').waitFor({ state: want ? 'visible' : 'hidden' });
    };
    await drawer(true);
    await open('a session\'s menu', () => page.locator('.session-row').first().getByRole('button', { name: /^Actions for/ }).tap(), '.session-menu');
    await open('Delete?', () => page.getByRole('menuitem', { name: /^Delete/ }).tap(), '.overlay .dialog');
    await page.getByRole('button', { name: 'Cancel', exact: true }).tap();
    await page.locator('.overlay').waitFor({ state: 'detached' });
    await drawer(true);
    await open('the workspace', () => page.locator('.workspace-settings-button').first().tap(), '.overlay .dialog');
    await close('.overlay .dialog');
    await drawer(false);
    await open('the lightbox', () => page.getByRole('button', { name: 'View wide.png full size' }).tap(), '.lightbox-frame');
    const img = await page.locator('.lightbox-image').boundingBox();
    assert.ok(img.width >= width - 32 && img.width <= width, `a 960 px image scaled to the screen at ${width}px: ${img.width}px`);
    await close('.lightbox');
  }

  // On a desktop the 960 px image is shown at its size.
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.getByRole('button', { name: 'View wide.png full size' }).click();
  const full = await page.locator('.lightbox-image').boundingBox();
  assert.ok(Math.abs(full.width - 960) < 1, `at its size on a desktop: ${full.width}px`);
  await page.keyboard.press('Escape');

  // The approval of a delegation, at phone width.
  await page.setViewportSize({ width: 360, height: PHONE.height });
  await sendByTouch(page, 'delegate: add refresh tokens in src/auth.py');
  const approval = page.getByRole('dialog', { name: 'Delegate this task?' });
  await approval.waitFor({ timeout: 20_000 });
  await fits(page, 'the approval at 360px', '.overlay .dialog');
  await approval.getByRole('button', { name: 'Deny' }).tap();
  await replyDone(page);
  assert.deepEqual(page.problems, []);
  await page.close();
});

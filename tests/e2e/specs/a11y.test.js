// Accessibility: axe-core (tests/e2e/package.json, pinned) on every screen and dialog, in the light
// and the dark theme, at 1280×800 and at 390×844: no `serious` or `critical` violation anywhere.
// Screens and dialogs are found by their role and name, so they can change shape; each is one entry
// of SCREENS (how to open it, how to close it) — a new dialog is one more entry.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { startServer, launchBrowser, openPage, ready, replyDone, send, projectDir, setOrchestratorDir, png } from '../harness.js';

// axe is injected as a script: the page's Content-Security-Policy (rightly) refuses it, so this
// browser context bypasses it.
const app = {};
before(async () => {
  app.server = await startServer();
  app.browser = await launchBrowser({ options: { bypassCSP: true } });
});
after(async () => {
  await app.browser?.close();
  await app.server?.stop();
});
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const SIZES = [{ width: 1280, height: 800 }, { width: 390, height: 844 }];
const THEMES = ['light', 'dark'];
const phone = (page) => page.viewportSize().width < 700;


/** The dialog (or alert dialog) named `name` that is open now. */
const dialog = (page, name) => page.getByRole('dialog', { name }).or(page.getByRole('alertdialog', { name }));

/** Closes whatever dialog is open: Esc, else its Close / Cancel / Deny button. */
async function closeDialogs(page) {
  const open = page.locator('[role="dialog"], [role="alertdialog"]');
  if ((await open.count()) === 0) return;
  await page.keyboard.press('Escape');
  await open.first().waitFor({ state: 'detached', timeout: 1_500 }).catch(() => {});
  for (let i = 0; (await open.count()) > 0 && i < 3; i++) {
    await open.last().getByRole('button', { name: /^(Close|Cancel|Deny|Done|×|Close .*)$/ }).first().click({ timeout: 3_000 });
  }
  assert.equal(await open.count(), 0, 'every dialog closed again');
}

/** Opens the sidebar where it is a drawer (the phone); a no-op where it is always shown. */
async function showSidebar(page) {
  const sidebar = page.getByRole('navigation', { name: 'Sessions' });
  const shown = async () => (await sidebar.isVisible()) && (!phone(page) || (await sidebar.evaluate((e) => e.classList.contains('open'))));
  if (!(await shown())) await page.getByRole('button', { name: 'Sessions', exact: true }).click();
  await sidebar.waitFor();
}

/**
 * The screens: `open(page)` shows it (from the conversation `setUp` left open), `close(page)` puts
 * the app back. `scope`: a selector axe is limited to (default: the whole page).
 */
const SCREENS = [
  { name: 'welcome', open: async (page) => { await page.keyboard.press('Control+Shift+O'); await page.locator('.welcome').waitFor(); }, close: openConversation },
  { name: 'conversation (code block, tool card, attachments)', open: openConversation },
  { name: 'sidebar', open: showSidebar, close: async (page) => { if (phone(page)) await page.keyboard.press('Escape'); } },
  {
    name: 'session panel',
    open: async (page) => { await page.getByRole('button', { name: 'Session', exact: true }).click(); await page.locator('.session-panel').waitFor(); },
    close: async (page) => { await page.getByRole('button', { name: 'Close the session panel' }).click(); },
  },
  {
    name: 'search with hits',
    open: async (page) => {
      await page.keyboard.press('Control+k');
      const d = dialog(page, /search/i);
      await d.waitFor();
      await d.getByRole('combobox').fill('fibonacci');
      await d.locator('.hit').first().waitFor({ timeout: 10_000 });
    },
    close: closeDialogs,
  },
  { name: 'settings', open: (page) => openSettings(page), close: closeDialogs, sections: true },
  { name: 'storage', open: async (page) => { await page.locator('.storage-usage').click(); await dialog(page, 'Storage').waitFor(); }, close: closeDialogs },
  {
    name: 'shortcuts',
    open: async (page) => {
      const button = page.getByRole('button', { name: 'Keyboard shortcuts' });
      if (await button.isVisible()) await button.click();
      else {
        await page.evaluate(() => document.activeElement?.blur());
        await page.keyboard.press('?');
      }
      await dialog(page, /shortcuts/i).waitFor();
    },
    close: closeDialogs,
  },
  {
    // The sidebar's ⚙ opens Settings at the workspace it names (Sync, like every section, is scanned
    // with Settings above).
    name: 'workspace',
    open: async (page) => {
      await showSidebar(page);
      await page.getByRole('button', { name: /^Configure workspace/ }).first().click();
      await dialog(page, 'Settings').getByRole('tab', { name: 'Workspaces', selected: true }).waitFor();
    },
    close: closeDialogs,
  },
  {
    name: 'model picker',
    open: async (page) => { await page.getByRole('button', { name: /^Model/ }).first().click(); await dialog(page, 'Model for this session').waitFor(); },
    close: closeDialogs,
  },
  {
    name: 'delete confirm',
    open: async (page) => {
      await showSidebar(page);
      await page.getByRole('button', { name: /^Actions for/ }).first().click();
      await page.getByRole('menuitem', { name: /^Delete/ }).click();
      await dialog(page, 'Delete session').waitFor();
    },
    close: closeDialogs,
  },
  {
    name: 'approval',
    open: async (page) => {
      await send(page, 'Please delegate: add refresh tokens in src/auth.py');
      await dialog(page, 'Delegate this task?').waitFor({ timeout: 20_000 });
    },
    close: async (page) => { await dialog(page, 'Delegate this task?').getByRole('button', { name: 'Deny' }).click(); await replyDone(page); },
  },
  {
    name: 'lightbox',
    open: async (page) => {
      // Its thumbnail may sit under the phone's composer: the lightbox, not the click, is under test here.
      await page.locator('.turn .attachment-view').first().evaluate((b) => b.click());
      await dialog(page, /^Image/).waitFor();
    },
    close: closeDialogs,
  },
];

async function openConversation(page) {
  await showSidebar(page);
  await page.locator('.session', { hasText: 'a11y: the fibonacci' }).first().click();
  await page.locator('.turn .code-block').first().waitFor();
  if (phone(page) && (await page.getByRole('navigation', { name: 'Sessions' }).isVisible())) await page.keyboard.press('Escape');
}

async function openSettings(page) {
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  await dialog(page, 'Settings').waitFor();
}

/** The conversation every screen is seen over: a code block, a tool card, a file and an image. */
async function setUp(page) {
  await setOrchestratorDir(page, projectDir());
  await page.getByRole('button', { name: '+ New session' }).click();
  await page.locator('input[type="file"]').first().setInputFiles([
    { name: 'script.py', mimeType: 'text/x-python', buffer: Buffer.from('print("hi")\n') },
    { name: 'chart.png', mimeType: 'image/png', buffer: png(96, 64) },
  ]);
  await send(page, 'a11y: the fibonacci function please [[code:python]]\ndef fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)  # a long line that has to scroll sideways in a narrow window');
  await replyDone(page);
  await send(page, 'What did we decide earlier about fibonacci?');
  await replyDone(page);
  await page.locator('.turn .tool-result, .turn .tool-call').first().waitFor();
}

/** Runs axe over the page as it is; resolves to its serious and critical violations, described. */
async function violations(page, where) {
  const result = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')).slice(0, 5) }));
  });
  return result
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${where}: ${v.id} (${v.impact}) — ${v.help}\n      at ${v.targets.join('\n         ')}`);
}

async function setTheme(page, theme) {
  await page.emulateMedia({ colorScheme: theme });
  await page.evaluate((t) => document.documentElement.setAttribute('data-theme', t), theme);
}

test('axe finds no serious or critical violation on any screen, in either theme, at either width', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  page.setDefaultTimeout(10_000);
  await page.setViewportSize(SIZES[0]);
  await setUp(page);
  const found = [];
  for (const size of SIZES) {
    await page.setViewportSize(size);
    for (const screen of SCREENS) {
      // A screen that cannot be opened or closed is reported, and the next starts from a fresh page.
      try {
        await scan(page, screen, size, found);
      } catch (e) {
        found.push(`${screen.name} [${size.width}×${size.height}]: could not be driven: ${e.message.split('\n')[0]}`);
        await page.reload();
        await ready(page);
        await openConversation(page);
      }
    }
  }
  await setTheme(page, 'light');
  if (found.length) console.log(`axe: ${found.length} serious or critical violations\n  ${found.join('\n  ')}`);
  assert.deepEqual(found, [], `axe found serious or critical violations:\n  ${found.join('\n  ')}`);
  // Known, not an accessibility matter: attaching through the file input logs two "Failed to load
  // resource: net::ERR_FILE_NOT_FOUND" for blob: URLs of the composer's chips, revoked once the message
  // is sent (checked with a requestfailed listener). Everything else the page logs fails the test.
  const problems = page.problems.filter((p) => p !== 'console.error: Failed to load resource: net::ERR_FILE_NOT_FOUND');
  assert.ok(page.problems.length - problems.length <= 2, page.problems.join('\n'));
  assert.deepEqual(problems, []);
  await page.close();
});

/** Opens `screen`, runs axe over it (each Settings section, both themes), closes it. */
async function scan(page, screen, size, found) {
  await screen.open(page);
  await page.addScriptTag({ path: AXE });
  // Settings' sections, where it has them (tabs or a section list), are each a screen.
  const tabs = screen.sections ? page.locator('[role="dialog"] [role="tab"]') : null;
  const sections = tabs ? Math.max(1, await tabs.count()) : 1;
  for (let s = 0; s < sections; s++) {
    let label = screen.name;
    if (tabs && (await tabs.count()) > 0) {
      await tabs.nth(s).click();
      label = `${screen.name} → ${(await tabs.nth(s).innerText()).trim()}`;
    }
    for (const theme of THEMES) {
      await setTheme(page, theme);
      await page.waitForTimeout(100); // the theme's transitions, if any
      found.push(...(await violations(page, `${label} [${theme}, ${size.width}×${size.height}]`)));
    }
  }
  if (screen.close) await screen.close(page);
}

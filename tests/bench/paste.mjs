// A large paste (issue #34): 3 MB of text pasted into the app's composer, from the paste until the
// frame after the one that drew it, beside the same paste into a plain textarea of the composer's
// size (www/paste-floor.html). The paste is synthetic: a `paste` ClipboardEvent carrying the text in
// its DataTransfer, dispatched on the box (the app's paste handler runs as for a real one), then, as
// an untrusted event has no default action, what the browser's does: the selection replaced by the
// text and one `input` event (`insertFromPaste`). Not Playwright's `fill`.
//
// Also read from CDP `Performance.getMetrics` over the same span: main-thread script / layout / style.

/** The text: lines of prose and code, `chars` characters (ASCII), the same every run. */
export function pasteText(chars) {
  const lines = [
    'The connection pool keeps at most `limit` sockets open; each request takes one and gives it back.',
    'fn rotate_refresh_token_v2(pool: &ConnectionPool, token: &str) -> Result<Token, Error> {',
    '    let next = pool.acquire()?.query("SELECT next_page_token FROM sessions WHERE id = ?1", [token])?;',
    '}',
    'A race condition in src/auth.py let two tabs refresh the same token; the second one lost its session.',
  ];
  let out = '';
  for (let i = 0; out.length < chars; i++) out += `${lines[i % lines.length]} ${i}\n`;
  return out.slice(0, chars);
}

/** In the page: pastes `text` into #composer-input and waits two frames; the times from the paste. */
async function pasteInPage(text) {
  // A paste's default action: the selection replaced by the text, then an `input` event
  // (`insertFromPaste`). execCommand('insertText') would do it as typing, paragraph by paragraph: 5 s
  // for 100 KB of lines in a plain textarea, and 3 MB never finishes.
  const insert = (el, text) => {
    el.setRangeText(text, el.selectionStart, el.selectionEnd, 'end');
    el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertFromPaste' }));
  };
  const el = document.getElementById('composer-input');
  el.focus();
  const frame = () => new Promise((ok) => requestAnimationFrame(() => ok()));
  await frame();
  await frame();
  const t0 = performance.now();
  const data = new DataTransfer();
  data.setData('text/plain', text);
  const ev = new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true });
  el.dispatchEvent(ev);
  if (!ev.defaultPrevented) insert(el, text);
  const handled = performance.now() - t0;
  // The app attaches a long paste as a text file (composer.rs `pasted_file`): its chip appears once
  // the file was probed, a task or two later.
  const chip = () => document.querySelector('.attachment-chips.pending .attachment-chip');
  if (ev.defaultPrevented) {
    for (let i = 0; !chip() && i < 600; i++) await frame();
  }
  // The box measures its growth in the next frame (composer.rs); the frame after that one starts once
  // it was drawn.
  await frame();
  await frame();
  const file = chip()?.querySelector('.attachment-name')?.textContent ?? null;
  return { handled_ms: handled, painted_ms: performance.now() - t0, length: el.value.length, file };
}

async function metrics(cdp) {
  const { metrics } = await cdp.send('Performance.getMetrics');
  return Object.fromEntries(metrics.map((m) => [m.name, m.value * 1000]));
}

async function measure(context, url, text, app) {
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error(`  [page error] ${e.message}`));
  await page.goto(url);
  if (app) {
    await page.locator('.storage-status[data-state="ready"]').waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: '+ New session' }).click();
  } else {
    await page.waitForFunction(() => window.benchReady === true);
  }
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable', { timeDomain: 'threadTicks' });
  const before = await metrics(cdp);
  const r = await page.evaluate(pasteInPage, text);
  const after = await metrics(cdp);
  // The text is in the box (the plain textarea), or attached whole as a file (the app).
  if (r.length !== text.length && !(r.file && r.length === 0)) {
    throw new Error(`paste: the box holds ${r.length} characters of ${text.length} and no file was attached`);
  }
  const d = (k) => after[k] - before[k];
  return { ...r, script_ms: d('ScriptDuration'), layout_ms: d('LayoutDuration'), style_ms: d('RecalcStyleDuration') };
}

/** `reps` rounds of each, a fresh browser profile per round. */
export async function pasteBench({ launch, floorUrl, devUrl, reps, chars = 3_000_000 }) {
  const text = pasteText(chars);
  const out = { chars, floor: [], app: [] };
  for (let i = 0; i < reps; i++) {
    for (const [key, url, app] of [['floor', floorUrl, false], ['app', devUrl, true]]) {
      const { context, close } = await launch();
      try {
        const r = await measure(context, url, text, app);
        console.error(`bench: paste ${key} ${r.painted_ms.toFixed(0)} ms (input handled ${r.handled_ms.toFixed(0)} ms,` +
          ` script ${r.script_ms.toFixed(0)}, layout ${r.layout_ms.toFixed(0)}, style ${r.style_ms.toFixed(0)} ms)`);
        out[key].push(r);
      } finally {
        await close();
      }
    }
  }
  return out;
}

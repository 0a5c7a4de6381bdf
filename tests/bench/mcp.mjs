// An MCP tool call's overhead (issue #31): from the model's call to the request leaving the page, in
// headless Chromium through the real path — the demo model's reply asks for server-everything's `echo`
// ([[mcp:everything/echo {…}]]), the storage worker's agent loop archives the call and asks the page to
// run it (an MCP tool is one of the page's tools), whose MCP host (web/mcp/host.mjs) calls it with the
// official SDK's client — against server-everything on loopback (scripts/mcp-servers.sh, started by
// scripts/bench.sh).
//
// Both ends are read from the browser's network events, in the one clock of its request timings: the
// model's call is there when the model's response has ended (its tool call is complete only then),
// the request has left when the browser sends the `tools/call` POST. Beside it, the floor: the same
// POST (its headers and body as the app sent them) by a bare `fetch` from the same page, from the call
// of `fetch` to the request leaving.

/** Adds server-everything in Settings → Tools for the current workspace. */
async function addServer(page, url) {
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Settings' });
  await dialog.getByRole('tab', { name: 'Tools', exact: true }).click();
  await dialog.getByLabel('Name', { exact: true }).fill('everything');
  await dialog.getByLabel('URL', { exact: true }).fill(url);
  await dialog.getByRole('button', { name: 'Add server' }).click();
  await dialog.locator('.mcp-server[data-server="everything"] .mcp-status.connected').waitFor({ timeout: 30_000 });
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
}

/** The headers of the app's request that a page's `fetch` may set again. */
const RESENT = ['content-type', 'accept', 'mcp-protocol-version', 'mcp-session-id', 'mcp-method', 'mcp-name'];

/** `reps` calls through the app, then `reps` bare fetches of the last one's request from the page. */
export async function mcpBench({ launch, devUrl, mcpUrl, reps }) {
  const { context, close } = await launch();
  try {
    const page = await context.newPage();
    await page.goto(devUrl);
    await page.locator('.storage-status[data-state="ready"]').waitFor({ timeout: 30_000 });
    await addServer(page, mcpUrl);
    const modelEnds = [];
    const calls = [];
    context.on('requestfinished', (r) => {
      const t = r.timing();
      if (r.url().includes('/chat/completions')) modelEnds.push(t.startTime + t.responseEnd);
      else if (r.url() === mcpUrl && r.method() === 'POST' && (r.postData() ?? '').includes('"tools/call"')) calls.push({ request: r, start: t.startTime });
    });
    const box = page.getByLabel('Message', { exact: true });
    const app = [];
    // One call first, not counted: the connection is opened (and the tools listed) before the model is asked.
    for (let i = 0; i <= reps; i++) {
      const before = calls.length;
      await box.fill(`[[mcp:everything/echo {"message": "bench ${i}"}]]`);
      await box.press('Enter');
      await page.locator('.turn[data-role="tool"]', { hasText: `Echo: bench ${i}` }).waitFor({ timeout: 30_000 });
      await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 30_000 });
      for (let k = 0; calls.length === before && k < 100; k++) await page.waitForTimeout(50); // its event, after the reply
      const call = calls[before];
      if (!call) throw new Error(`bench mcp: no tools/call request was seen for call ${i}`);
      const model = Math.max(...modelEnds.filter((t) => t <= call.start));
      if (i > 0) app.push(call.start - model);
    }

    // The floor: the last call's request again, by a bare fetch from the page that made it.
    const last = calls.at(-1).request;
    const all = await last.allHeaders();
    const headers = Object.fromEntries(Object.entries(all).filter(([k]) => RESENT.includes(k.toLowerCase())));
    const floor = [];
    for (let i = 0; i < reps; i++) {
      const before = calls.length;
      const called = await page.evaluate(async ({ url, headers, body }) => {
        const t = performance.timeOrigin + performance.now();
        const res = await fetch(url, { method: 'POST', headers, body });
        await res.text();
        return t;
      }, { url: mcpUrl, headers, body: last.postData() });
      for (let k = 0; calls.length === before && k < 100; k++) await page.waitForTimeout(50);
      if (calls[before]) floor.push(calls[before].start - called);
    }
    await page.close();
    return { app, floor, reps };
  } finally {
    await close();
  }
}

// Chatting with the demo model in the real app: the reply streams in, everything is saved on OPFS,
// and a reload brings the conversation back; Stop keeps the partial reply.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useServerAndBrowser, openPage, ready, replyDone, send, setOrchestratorDir, projectDir } from '../harness.js';

const app = useServerAndBrowser();

test('a message gets a streamed reply that survives a reload', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await send(page, 'We use JWT for auth. Please review src/auth.py');
  const reply = page.locator('.turn[data-role="assistant"] .turn-text').last();
  await reply.filter({ hasText: 'You said' }).waitFor({ timeout: 20_000 });
  await replyDone(page);
  assert.equal(await page.getByLabel('Message', { exact: true }).inputValue(), '', 'the draft is cleared once saved');
  const session = page.locator('.session.active .session-title');
  await session.filter({ hasText: 'We use JWT for auth.' }).waitFor();

  await page.reload();
  await ready(page);
  await page.locator('.session', { hasText: 'We use JWT for auth.' }).click();
  await page.locator('.turn[data-role="user"]', { hasText: 'Please review src/auth.py' }).waitFor();
  await page.locator('.turn[data-role="assistant"]', { hasText: 'You said' }).waitFor();
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a back-reference shows the archive search and its answer', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'The cookie is named zebra_crossing.');
  await page.locator('.turn[data-role="assistant"]', { hasText: 'You said' }).waitFor({ timeout: 20_000 });
  await replyDone(page);
  await send(page, 'What did we decide earlier about zebra_crossing?');
  await page.locator('.tool-call', { hasText: 'Searched the archive for' }).waitFor({ timeout: 20_000 });
  await page.locator('.turn[data-role="assistant"]', { hasText: 'conversation_recall returned' }).waitFor({ timeout: 20_000 });
  // Once the reply is saved the view stops following the end, so the card stays where it is clicked.
  await replyDone(page);
  // The tool card: what ran, how long it took, and (opened) what it returned — the archived words.
  const card = page.locator('.tool-result', { hasText: 'Result of conversation_recall' });
  assert.match(await card.locator('summary').innerText(), /Result of conversation_recall · \d+(\.\d)? (ms|s)/);
  await card.locator('summary').click();
  await card.locator('pre').waitFor({ state: 'visible' });
  assert.match(await card.locator('pre').innerText(), /zebra_crossing/);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('Stop keeps the partial reply as an interrupted turn', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'Tell me a long story about tokens, sessions, cookies and everything else [[fault:slow]]');
  const stop = page.getByRole('button', { name: 'Stop' });
  await stop.waitFor();
  await page.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'Demo' }).waitFor({ timeout: 20_000 });
  await stop.click();
  await page.locator('.turn[data-role="assistant"] .badge.interrupted').waitFor({ timeout: 20_000 });
  await page.getByRole('button', { name: 'Send' }).waitFor();
  const partial = await page.locator('.turn[data-role="assistant"] .turn-text').last().innerText();
  assert.ok(partial.startsWith('Demo'), `partial text kept: ${partial}`);
  assert.ok(!partial.includes('real endpoint for real answers'), 'the reply was cut short');
  // Retry goes on from the saved words: the same turn is finished, its start kept, nothing repeated.
  await page.getByRole('button', { name: 'Retry' }).click();
  await replyDone(page);
  await page.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'real endpoint for real answers' }).last().waitFor({ timeout: 30_000 });
  assert.equal(await page.getByRole('button', { name: 'Retry' }).count(), 0, 'nothing left to retry');
  assert.equal(await page.locator('.turn[data-role="assistant"]').count(), 1, 'finished in place, not a second reply');
  const whole = await page.locator('.turn[data-role="assistant"] .turn-text').innerText();
  assert.ok(whole.startsWith(partial.trim()), `the partial reply is kept as its start: ${whole}`);
  assert.equal(whole.split('Demo model here').length - 1, 1, 'nothing is repeated');
  await page.close();
});

test('a reload during streaming leaves an interrupted turn with its partial text; Retry completes the reply', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'reload-mid-stream: tell me about sessions, tokens and cookies at length [[fault:slow]]');
  await page.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'Demo model here' }).waitFor({ timeout: 20_000 });
  await page.reload();
  await ready(page);
  await page.locator('.session', { hasText: 'reload-mid-stream' }).first().click();
  const cut = page.locator('.turn[data-role="assistant"]', { has: page.locator('.badge.interrupted') });
  await cut.waitFor({ timeout: 20_000 });
  const partial = await cut.locator('.turn-text').innerText();
  assert.ok(partial.startsWith('Demo model here'), `the streamed part was saved: ${partial}`);
  assert.ok(!partial.includes('real endpoint for real answers'), 'and only that part');
  await page.getByRole('button', { name: 'Retry' }).click();
  await page.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'real endpoint for real answers' }).waitFor({ timeout: 30_000 });
  await replyDone(page);
  assert.equal(await page.getByRole('button', { name: 'Retry' }).count(), 0, 'nothing left to retry');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('while a reply is written, another session opens and a search answers at once', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'meanwhile-first: the parking spot is B12');
  await replyDone(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  // The slow demo reply (200 ms a chunk) echoes the long message: it takes about 12 s to write, and
  // everything below happens meanwhile (before, the other session opened only once it was saved).
  const long = 'tell me about sessions, tokens and cookies at length. '.repeat(16);
  await send(page, `meanwhile-second: ${long}[[fault:slow]]`);
  const stop = page.getByRole('button', { name: 'Stop' });
  await page.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'Demo model here' }).waitFor({ timeout: 20_000 });
  await page.locator('.session', { hasText: 'meanwhile-first' }).click();
  await page.locator('.turn[data-role="user"]', { hasText: 'the parking spot is B12' }).waitFor({ timeout: 5_000 });
  // Beside Stop, the composer says where the reply is written.
  await page.locator('.replying-elsewhere', { hasText: 'Writing a reply in “meanwhile-second' }).waitFor({ timeout: 5_000 });
  await page.keyboard.press('Control+k');
  const box = page.getByRole('combobox', { name: 'Search all sessions' });
  await box.fill('parking');
  await page.locator('.hit', { hasText: 'parking spot' }).first().waitFor({ timeout: 5_000 });
  await box.press('Enter'); // (Esc would also stop the reply)
  await page.locator('.turn.focused[data-turn="1"]', { hasText: 'parking spot' }).waitFor({ timeout: 5_000 });
  assert.equal(await stop.count(), 1, 'the reply was still being written meanwhile');
  // Back to it: the reply finishes in place, whole.
  await page.locator('.session', { hasText: 'meanwhile-second' }).click();
  await page.locator('.replying-elsewhere').waitFor({ state: 'detached' });
  await page.locator('.turn[data-role="assistant"] .turn-text', { hasText: 'real endpoint for real answers' }).waitFor({ timeout: 40_000 });
  await replyDone(page);
  assert.equal(await page.locator('.turn[data-role="assistant"] .badge.interrupted').count(), 0, 'finished, not cut');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a 1 MB message is stored whole, shown clipped, and "Show all" shows every character', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  const big = `big-paste ${'0123456789abcdef'.repeat(65_536)} END-OF-PASTE`;
  await send(page, big);
  const turn = page.locator('.turn[data-role="user"]', { hasText: 'big-paste' });
  await turn.waitFor({ timeout: 30_000 });
  await replyDone(page);
  const shown = await turn.locator('.turn-text').evaluate((e) => e.textContent.length);
  assert.ok(shown < 100_000, `clipped on screen (${shown} chars)`);
  await turn.getByRole('button', { name: /^Show all \(1(\.0)? MB\)$/ }).click();
  await turn.locator('.turn-text', { hasText: 'END-OF-PASTE' }).waitFor();
  assert.equal(await turn.locator('.turn-text').evaluate((e) => e.textContent.length), big.length, 'every character');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('delegation asks for approval, then the result comes back into the conversation', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await setOrchestratorDir(page, projectDir());
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'Please delegate: add refresh tokens in src/auth.py');
  const dialog = page.getByRole('dialog', { name: 'Delegate this task?' });
  await dialog.waitFor({ timeout: 20_000 });
  assert.match(await dialog.innerText(), /Goal: add refresh tokens in src\/auth\.py/);
  await dialog.getByRole('button', { name: 'Approve' }).click();
  // The live checklist: the goal, then its steps, ticked off as they complete.
  const card = page.locator('.task-card', { hasText: 'Delegated: add refresh tokens in src/auth.py' });
  await card.waitFor({ timeout: 20_000 });
  await card.locator('.task-step').first().waitFor({ timeout: 20_000 });
  await page.locator('.task-card[data-status="completed"]').waitFor({ timeout: 30_000 });
  const steps = await card.locator('.task-step').count();
  assert.ok(steps >= 2, `the plan's steps are listed (${steps})`);
  assert.equal(await card.locator('.task-step[data-status="completed"]').count(), steps, 'every step is ticked');
  assert.equal(await card.getByRole('button', { name: 'Cancel task' }).count(), 0, 'a finished task cannot be cancelled');
  const result = page.locator('.tool-result', { hasText: 'Result of delegate_task' });
  await result.waitFor({ timeout: 30_000 });
  await result.locator('summary').click();
  const text = await result.locator('pre').innerText();
  assert.match(text, /^Task completed:/);
  assert.match(text, /\[x\]/);
  assert.match(text, /src\/auth\.py/);
  await replyDone(page);

  await send(page, 'delegate: something risky');
  await dialog.waitFor({ timeout: 20_000 });
  await dialog.getByRole('button', { name: 'Deny' }).click();
  await page.locator('.tool-result', { hasText: 'Result of delegate_task' }).nth(1).waitFor({ timeout: 20_000 });
  await replyDone(page);
  const denied = page.locator('.tool-result').nth(1);
  await denied.locator('summary').click();
  assert.match(await denied.locator('pre').innerText(), /declined/);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a delegated task can be cancelled from its checklist, and the model is told', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await setOrchestratorDir(page, projectDir());
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'delegate: a slow migration of the billing module');
  const dialog = page.getByRole('dialog', { name: 'Delegate this task?' });
  await dialog.waitFor({ timeout: 20_000 });
  await dialog.getByRole('button', { name: 'Approve' }).click();
  const card = page.locator('.task-card', { hasText: 'slow migration' });
  await card.locator('.task-step[data-status="running"]').first().waitFor({ timeout: 20_000 });
  await card.getByRole('button', { name: 'Cancel task' }).click();
  await page.locator('.task-card[data-status="cancelled"]').waitFor({ timeout: 20_000 });
  const result = page.locator('.tool-result', { hasText: 'Result of delegate_task' });
  await result.waitFor({ timeout: 20_000 });
  await result.locator('summary').click();
  assert.match(await result.locator('pre').innerText(), /cancel/i);
  await replyDone(page);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('settings are validated, kept across reloads, and the key stays out of the archive', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: 'Settings' }).click();
  const dialog = page.getByRole('dialog', { name: 'Settings' });
  await dialog.getByLabel('Base URL').fill('api.example.test/v1');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.locator('.field-error', { hasText: 'starting with https://' }).waitFor();
  await dialog.getByLabel('Base URL').fill(`${app.server.url}v1`);
  await dialog.getByLabel('Model').fill('demo-large');
  await dialog.getByLabel(/API key/).fill('sk-never-in-the-archive');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.waitFor({ state: 'detached' });
  assert.equal((await page.locator('.model-label').innerText()).trim(), 'demo-large');
  await page.reload();
  await ready(page);
  assert.equal((await page.locator('.model-label').innerText()).trim(), 'demo-large', 'settings survive a reload');
  await send(page, 'hello with the key set');
  await page.locator('.turn[data-role="assistant"]', { hasText: 'You said' }).waitFor({ timeout: 20_000 });
  await replyDone(page);
  await page.close();
});

test('Ctrl+K finds a word in any session and opens the session at that turn', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'The flamingo_gateway lives in infra/edge.tf');
  await replyDone(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'Something else entirely');
  await replyDone(page);
  await page.keyboard.press('Control+k');
  const box = page.getByRole('combobox', { name: 'Search all sessions' });
  await box.fill('flamingo_gate');
  const hit = page.locator('.hit', { hasText: 'turn 1' }).filter({ has: page.locator('mark') }).first();
  await hit.waitFor({ timeout: 10_000 });
  assert.match(await hit.innerText(), /The flamingo_gateway lives in infra\/edge\.tf/);
  await box.press('Enter');
  await page.locator('.turn.focused[data-turn="1"]', { hasText: 'flamingo_gateway' }).waitFor({ timeout: 10_000 });
  assert.match(await page.locator('.session.active').innerText(), /flamingo_gateway/);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('at phone width the session list opens from the header', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await page.setViewportSize({ width: 390, height: 844 });
  await ready(page);
  const list = page.locator('nav.sidebar');
  assert.equal(await list.isVisible(), false);
  await page.getByRole('button', { name: 'Sessions' }).click();
  await list.waitFor({ state: 'visible' });
  await page.locator('.session').first().click();
  await list.waitFor({ state: 'hidden' });
  await page.locator('.turn').first().waitFor();
  await page.close();
});

test('Export downloads the whole archive as JSON Lines, without the API key', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'remember the okapi_protocol for the export');
  await replyDone(page);
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export', exact: true }).click(),
  ]);
  assert.match(download.suggestedFilename(), /^cowork-archive-\d{4}-\d{2}-\d{2}\.jsonl$/);
  const { readFile } = await import('node:fs/promises');
  const text = await readFile(await download.path(), 'utf8');
  const lines = text.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines[0], { type: 'header', format: 'cowork-archive', version: 3 });
  assert.equal(lines.at(-1).type, 'end');
  assert.ok(lines.some((l) => l.type === 'turn' && l.content === 'remember the okapi_protocol for the export'));
  assert.ok(!text.includes('sk-never-in-the-archive'), 'the API key is never exported');
  await page.close();
});

test('HTML and script in messages are shown as text, never run', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await page.evaluate(() => { window.__pwned = false; });
  await send(page, '<img src=x onerror="window.__pwned=true"> <script>window.__pwned=true</script> **bold**');
  await replyDone(page);
  // The demo model echoes the message back, so the assistant's Markdown contains it too.
  const reply = page.locator('.turn[data-role="assistant"] .turn-text').last();
  assert.match(await reply.innerText(), /<img src=x onerror="window.__pwned=true">/);
  assert.equal(await page.locator('.turn img').count(), 0, 'no element was created from the message');
  assert.equal(await page.locator('.turns script').count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), false);
  await page.close();
});

test('an unreachable endpoint says what to check, keeps the message, and the app stays usable', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: 'Settings' }).click();
  const dialog = page.getByRole('dialog', { name: 'Settings' });
  await dialog.getByLabel('Base URL').fill('http://127.0.0.1:9/v1');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'this message must not be lost');
  // Network failures are retried with backoff (1 + 2 + 4 s) before the error is shown.
  const notice = page.locator('.notice', { hasText: 'CORS' });
  await notice.waitFor({ timeout: 30_000 });
  assert.match(await notice.innerText(), /unreachable|reach/i);
  await page.locator('.turn[data-role="user"]', { hasText: 'this message must not be lost' }).waitFor();
  assert.equal(await page.getByLabel('Message', { exact: true }).inputValue(), '', 'the message was saved, so the draft is cleared');
  await replyDone(page);
  // The error offers the place that fixes it; "Test connection" checks the form before saving.
  await notice.getByRole('button', { name: 'Open Settings' }).click();
  await dialog.waitFor();
  await dialog.getByRole('button', { name: 'Test connection' }).click();
  await dialog.locator('.connection-result', { hasText: 'Could not reach the model endpoint' }).waitFor({ timeout: 20_000 });
  // Back to the demo model: the same session continues.
  await dialog.getByLabel('Base URL').fill(`${app.server.url}v1`);
  await dialog.getByRole('button', { name: 'Test connection' }).click();
  await dialog.locator('.connection-result', { hasText: 'Connected' }).waitFor({ timeout: 20_000 });
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.waitFor({ state: 'detached' });
  await send(page, 'and now it works');
  await page.locator('.turn[data-role="assistant"]', { hasText: 'and now it works' }).waitFor({ timeout: 20_000 });
  await page.close();
});

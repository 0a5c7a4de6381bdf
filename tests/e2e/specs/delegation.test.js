// Delegation against the dev server's orchestrator, which speaks real Loom's dialect (named CRLF events
// with Loom's envelope, heartbeats and pings, a replaying run stream, the status lag, files reported in
// tool events, manual approvals, workspaces that must be directories on its machine).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  useServerAndBrowser, launchBrowser, openPage, ready, replyDone, send, exportArchive, setOrchestratorDir, projectDir,
} from '../harness.js';

const app = useServerAndBrowser();

/** The tasks the orchestrator was given (Loom's `GET /tasks`). */
async function submitted() {
  const r = await fetch(new URL('/tasks', app.server.url));
  assert.equal(r.status, 200);
  return r.json();
}

/** A page in a browser profile of its own: a fresh archive whose workspace has no settings yet. */
async function freshPage(t) {
  const browser = await launchBrowser();
  t.after(() => browser.close());
  const page = await openPage(browser.context, app.server.url);
  await ready(page);
  return page;
}

/** Sends a delegation and approves it; resolves to the task's card. */
async function delegate(page, text, goal) {
  await send(page, text);
  const dialog = page.getByRole('dialog', { name: 'Delegate this task?' });
  await dialog.waitFor({ timeout: 20_000 });
  await dialog.getByRole('button', { name: 'Approve' }).click();
  const card = page.locator('.task-card', { hasText: `Delegated: ${goal}` });
  await card.waitFor({ timeout: 20_000 });
  return card;
}

/** The text of the n-th `delegate_task` result, opened. */
async function resultText(page, n = 0) {
  const result = page.locator('.tool-result', { hasText: 'Result of delegate_task' }).nth(n);
  await result.waitFor({ timeout: 30_000 });
  await result.locator('summary').click();
  // The opened section fills in after the click: wait for its text, as a reader would.
  const text = result.locator('pre').filter({ hasText: /\S/ });
  await text.waitFor({ timeout: 10_000 });
  return text.innerText();
}

/** The archived events of the session's only task, with Loom's sequence numbers. */
async function archivedEvents(page) {
  const lines = await exportArchive(page);
  const tasks = lines.filter((l) => l.type === 'task');
  assert.equal(tasks.length, 1, 'one task archived');
  const events = lines.filter((l) => l.type === 'task_event' && l.task_id === tasks[0].task_id);
  return { task: tasks[0], events: events.map((e) => ({ type: e.event_type, data: JSON.parse(e.data) })) };
}

test('a workspace without an orchestrator directory sends nothing and offers the setting; with it, the result names the files the tool events reported', async (t) => {
  const page = await freshPage(t);
  const before = (await submitted()).length;
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'Please delegate: add refresh tokens in src/auth.py and tests/test_auth.py');
  const text = await resultText(page);
  assert.match(text, /in workspace "default": this workspace has no orchestrator directory/);
  await replyDone(page);
  assert.equal(await page.getByRole('dialog', { name: 'Delegate this task?' }).count(), 0, 'nothing to approve');
  assert.equal((await submitted()).length, before, 'no request reached the orchestrator');

  // The result offers the setting; the directory is saved in the archive and sent from then on.
  const dir = projectDir();
  // It opens Settings at the workspace's section.
  await page.getByRole('button', { name: 'Set the orchestrator directory' }).click();
  const dialog = page.getByRole('dialog', { name: 'Settings' });
  await dialog.getByRole('tab', { name: 'Workspaces', selected: true }).waitFor();
  await dialog.getByLabel(/Orchestrator directory/).fill(dir);
  await dialog.getByRole('button', { name: 'Save workspace' }).click();
  await dialog.locator('.workspace-saved', { hasText: 'saved' }).waitFor();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });

  const goal = 'add refresh tokens in src/auth.py and tests/test_auth.py';
  const card = await delegate(page, `Please delegate: ${goal}`, goal);
  await page.locator('.task-card[data-status="completed"]').waitFor({ timeout: 30_000 });
  assert.ok((await card.locator('.task-step[data-status="completed"]').count()) >= 3, 'the checklist is ticked off');
  const result = await resultText(page, 1);
  assert.match(result, /^Task completed:/);
  assert.match(result, /Files changed:[\s\S]*src\/auth\.py/);
  assert.match(result, /tests\/test_auth\.py/);
  await replyDone(page);
  // The result keeps its lines and list structure, in the tool card and in the answer quoting it.
  assert.match(result, /\n\s+\[x\] [^\n]+\n\s+\[x\] /);
  const quoted = page.locator('.turn[data-role="assistant"]', { hasText: 'Here is what delegate_task returned' }).last();
  const quotedLines = (await quoted.locator('pre').innerText()).split('\n');
  assert.ok(quotedLines.length >= 6 && quotedLines[0].startsWith('Task completed:'), `several lines: ${quotedLines}`);
  const tasks = await submitted();
  assert.equal(tasks.length, before + 1, 'one task submitted');
  assert.equal(tasks.at(-1).goal, goal);

  // The session panel lists the files the orchestrator touched; the settings travel with an export.
  await page.getByRole('button', { name: 'Session', exact: true }).click();
  const panel = page.getByRole('complementary', { name: 'Session state' });
  await panel.getByText('tests/test_auth.py').first().waitFor();
  const lines = await exportArchive(page);
  const workspace = lines.find((l) => l.type === 'workspace');
  assert.deepEqual([workspace.workspace, workspace.orchestrator_dir], ['default', dir]);
  assert.deepEqual(page.problems, []);
});

test('a stream dropped by the orchestrator mid-task is resumed from the last event: every event archived once', async (t) => {
  const page = await freshPage(t);
  await setOrchestratorDir(page, projectDir());
  await page.getByRole('button', { name: '+ New session' }).click();
  const goal = 'migrate the billing module in src/billing.rs [[drop-stream:4]]';
  await delegate(page, `delegate: ${goal}`, goal);
  await page.locator('.task-card[data-status="completed"]').waitFor({ timeout: 30_000 });
  assert.match(await resultText(page), /^Task completed:[\s\S]*src\/billing\.rs/);
  await replyDone(page);

  const { events } = await archivedEvents(page);
  const sequences = events.map((e) => e.data.sequence).filter((s) => s !== undefined);
  assert.ok(sequences.length > 6, `the stream went on after the drop (${sequences.length} events)`);
  assert.equal(new Set(sequences).size, sequences.length, `no event archived twice: ${sequences}`);
  const sorted = [...sequences].sort((a, b) => a - b);
  assert.deepEqual(sorted, Array.from({ length: sorted.length }, (_, i) => sorted[0] + i), 'none missing');
  assert.ok(events.some((e) => e.data.event_type === 'task_completed' || e.type === 'task_completed'));
  assert.deepEqual(page.problems, []);
});

test('manual approvals: each step waits for Approve; a rejected step fails the task; all archived', async (t) => {
  const page = await freshPage(t);
  await setOrchestratorDir(page, projectDir(), { manual: true });
  await page.getByRole('button', { name: '+ New session' }).click();

  // Approve every step: the task completes.
  const goal = 'add a health check in src/health.rs';
  const card = await delegate(page, `delegate: ${goal}`, goal);
  for (let step = 0; step < 3; step++) {
    const held = card.locator('.step-approval');
    await held.waitFor({ timeout: 20_000 });
    assert.match(await held.innerText(), /Waiting for your approval/);
    await held.getByRole('button', { name: 'Approve' }).click();
    await held.waitFor({ state: 'detached', timeout: 20_000 });
  }
  await page.locator('.task-card[data-status="completed"]').waitFor({ timeout: 30_000 });
  assert.match(await resultText(page), /^Task completed:/);
  await replyDone(page);

  // Reject the first step of another (Loom then asks about the others, approved here): the task fails
  // and the model is told.
  const risky = 'drop the legacy tables in db/schema.sql';
  const second = await delegate(page, `delegate: ${risky}`, risky);
  for (const answer of ['Reject', 'Approve', 'Approve']) {
    const held = second.locator('.step-approval');
    await held.waitFor({ timeout: 20_000 });
    await held.getByRole('button', { name: answer }).click();
    await held.waitFor({ state: 'detached', timeout: 20_000 });
  }
  await page.locator('.task-card[data-status="failed"]').waitFor({ timeout: 30_000 });
  assert.match(await resultText(page, 1), /^Task failed:/);
  await replyDone(page);

  const lines = await exportArchive(page);
  const types = lines.filter((l) => l.type === 'task_event').map((l) => JSON.parse(l.data).event_type ?? l.event_type);
  assert.equal(types.filter((x) => x === 'approval_requested').length, 6, 'every held step is archived');
  assert.equal(types.filter((x) => x === 'approval_received').length, 5, 'the approvals');
  assert.equal(types.filter((x) => x === 'approval_rejected').length, 1, 'the rejection');
  assert.deepEqual(page.problems, []);
});

test('a delegation belongs to its session: another session opened mid-task shows none of its card or notices', async (t) => {
  const page = await freshPage(t);
  await setOrchestratorDir(page, projectDir(), { manual: true });
  // Another session, with a reply of its own, to open while the task runs.
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'a quiet conversation about the weather');
  await replyDone(page);
  await page.getByRole('button', { name: '+ New session' }).click();

  const goal = 'add a readiness probe in src/ready.rs';
  const card = await delegate(page, `delegate: ${goal}`, goal);
  await card.locator('.step-approval').waitFor({ timeout: 20_000 }); // held: the task is mid-way

  const sidebar = page.locator('nav.sidebar');
  await sidebar.locator('.session', { hasText: 'a quiet conversation' }).click();
  await page.locator('.turn[data-role="user"]', { hasText: 'a quiet conversation about the weather' }).waitFor();
  assert.equal(await page.locator('.task-card').count(), 0, 'no card of the other session, nor its Approve/Cancel');
  assert.equal(await page.locator('.notice', { hasText: 'delegate_task' }).count(), 0, 'nor its notices');

  // Back in its session, the card is there and the task goes on to the end.
  await sidebar.locator('.session', { hasText: goal }).click();
  for (let step = 0; step < 3; step++) {
    const held = card.locator('.step-approval');
    await held.waitFor({ timeout: 20_000 });
    await held.getByRole('button', { name: 'Approve' }).click();
    await held.waitFor({ state: 'detached', timeout: 20_000 });
  }
  await page.locator('.task-card[data-status="completed"]').waitFor({ timeout: 30_000 });
  await replyDone(page);
  assert.deepEqual(page.problems, []);
});

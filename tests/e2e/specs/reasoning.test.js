// A reply's reasoning and a refusal, as the demo model streams them ([[reasoning]], [[refusal]]): the
// reasoning streams live (open) before the reply, then shows collapsed above it, as text, is archived
// verbatim, and survives a reload; a refusal shows its text and a "refused" badge.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useServerAndBrowser, openPage, ready, replyDone, send, exportArchive } from '../harness.js';

const app = useServerAndBrowser();

// What the demo model thinks for "Explain the plan [[reasoning]]" (tests/src/model.rs).
const REASONING = 'Let me think about Explain the plan. The user wants a short answer.';

test('a reply with reasoning shows it collapsed above the text, archived and after a reload', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'Explain the plan [[reasoning]]');
  const turn = page.locator('.turn[data-role="assistant"]', { has: page.locator('details.thinking') });
  await turn.waitFor({ timeout: 20_000 });
  await replyDone(page);
  await turn.locator('.turn-text', { hasText: 'real endpoint for real answers' }).waitFor({ timeout: 20_000 });

  const thinking = turn.locator('details.thinking');
  assert.match(await thinking.locator('summary').innerText(), /^Thinking · \d+ tokens$/);
  assert.equal(await thinking.evaluate((d) => d.open), false, 'collapsed at first');
  assert.equal(await turn.locator('.thinking-text').isVisible(), false, 'its text hidden until opened');
  await thinking.locator('summary').click();
  await turn.locator('.thinking-text').waitFor({ state: 'visible' });
  assert.equal(await turn.locator('.thinking-text').innerText(), REASONING);
  const reply = await turn.locator('.turn-text').innerText();
  assert.match(reply, /You said: "Explain the plan"/);
  assert.ok(!reply.includes('Let me think'), `the reply does not contain the reasoning: ${reply}`);
  // Above the reply, not below it.
  const order = await turn.evaluate((t) =>
    t.querySelector('details.thinking').compareDocumentPosition(t.querySelector('.turn-text')),
  );
  assert.ok(order & 4 /* DOCUMENT_POSITION_FOLLOWING */, 'the Thinking section comes before the text');

  await page.reload();
  await ready(page);
  await page.locator('.session', { hasText: 'Explain the plan' }).first().click();
  const again = page.locator('.turn[data-role="assistant"]', { hasText: 'You said' }).last();
  await again.waitFor({ timeout: 20_000 });
  assert.match(await again.locator('details.thinking summary').innerText(), /^Thinking · \d+ tokens$/);
  await again.locator('details.thinking summary').click();
  assert.equal(await again.locator('.thinking-text').innerText(), REASONING);

  const lines = await exportArchive(page);
  const session = lines.find((l) => l.type === 'session' && l.title.includes('Explain the plan'));
  assert.ok(session, 'the session is exported');
  const assistant = lines.filter((l) => l.type === 'turn' && l.session_id === session.id && l.role === 'assistant');
  assert.equal(assistant.length, 1, 'one reply');
  assert.equal(assistant[0].metadata.reasoning, REASONING, 'the reasoning is archived verbatim');
  assert.equal(assistant[0].metadata.reasoning_field, 'reasoning_content');
  assert.ok(!assistant[0].content.includes('Let me think'), 'and kept apart from the text');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the reasoning streams live, open, before the reply, and collapses when the reply is done', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  // Slow chunks (200 ms each) so the thinking can be seen while it streams.
  await send(page, 'Think it over [[reasoning]] [[fault:slow]]');
  const turn = page.locator('.turn[data-role="assistant"]').last();
  const live = turn.locator('details.thinking.live');
  await live.locator('.thinking-text', { hasText: 'Let me think' }).waitFor({ timeout: 20_000 });
  assert.equal(await live.evaluate((d) => d.open), true, 'open while it streams');
  assert.match(await live.locator('summary').innerText(), /^Thinking · \d+ tokens?$/);
  const replyThen = (await turn.locator('.turn-text').innerText()).trim();
  assert.equal(replyThen, '', `the thinking shows before any reply text: ${replyThen}`);
  // It grows while the model thinks, then the reply follows.
  await live.locator('.thinking-text', { hasText: 'short answer.' }).waitFor({ timeout: 20_000 });
  await replyDone(page);
  const done = page.locator('.turn[data-role="assistant"]', { hasText: 'You said' }).last();
  await done.locator('.turn-text', { hasText: 'real endpoint for real answers' }).waitFor({ timeout: 20_000 });
  assert.equal(await done.locator('details.thinking.live').count(), 0, 'no live section once saved');
  const saved = done.locator('details.thinking');
  assert.equal(await saved.evaluate((d) => d.open), false, 'collapsed when the reply is done');
  await saved.locator('summary').click();
  assert.equal(
    await done.locator('.thinking-text').innerText(),
    'Let me think about Think it over. The user wants a short answer.',
  );
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a refusal shows its text and a "refused" badge', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'Tell me a secret [[refusal]]');
  const turn = page.locator('.turn[data-role="assistant"]', { has: page.locator('.badge.refused') });
  await turn.waitFor({ timeout: 20_000 });
  await replyDone(page);
  assert.equal(await turn.locator('.turn-head .badge.refused').innerText(), 'refused');
  assert.equal(await turn.locator('.badge.refused').getAttribute('title'), 'The model declined to answer');
  assert.equal((await turn.locator('.turn-text').innerText()).trim(), "I can't help with that.");
  assert.equal(await turn.locator('details.thinking').count(), 0, 'no reasoning, no Thinking section');
  assert.deepEqual(page.problems, []);
  await page.close();
});

/** Sends `text` and checks the thinking model's three tool rounds and its answer, in the app. */
async function threeToolRounds(page, text) {
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, text);
  const answer = page.locator('.turn[data-role="assistant"]', { hasText: 'I looked in the archive 3 times' });
  await answer.waitFor({ timeout: 30_000 });
  await replyDone(page);
  assert.equal(await page.locator('.turn[data-role="tool"]').count(), 3, 'three tool results');
  assert.equal(await page.locator('.tool-label', { hasText: 'Searched the archive' }).count(), 3, 'three look-ups');
  // Every reply of the loop thought first; each one's thinking is kept with it.
  assert.equal(await page.locator('.turn[data-role="assistant"] details.thinking').count(), 4);
  await answer.locator('details.thinking summary').click();
  assert.equal(await answer.locator('.thinking-text').innerText(), '3 look-ups done; time to answer.');
  assert.equal(await page.locator('.turn .badge.error').count(), 0, 'no request was refused');
  assert.equal(await page.getByRole('button', { name: 'Retry' }).count(), 0);
  assert.deepEqual(page.problems, []);
}

test('a DeepSeek-style thinking model gets its reasoning back through three tool rounds', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await threeToolRounds(page, 'Look it up three times [[tool-rounds]]');
  await page.close();
});

test('an Anthropic-style thinking model gets its signed thinking back through three tool rounds', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  // The endpoint as Settings saves it: kind Anthropic, the dev server's Anthropic route.
  await page.evaluate((base) => {
    localStorage.setItem('cowork.settings', JSON.stringify({
      kind: 'anthropic', base_url: `${base}anthropic/v1`, model: 'claude-demo', api_key: 'sk-ant-demo',
      context_window: 32768, output_reserve: 4096, orchestrator_url: '',
    }));
  }, app.server.url);
  try {
    await page.reload();
    await ready(page);
    assert.equal((await page.locator('.model-label').innerText()).trim(), 'claude-demo');
    await threeToolRounds(page, 'Search three times [[tool-rounds]]');
  } finally {
    await page.evaluate(() => localStorage.removeItem('cowork.settings'));
  }
  await page.close();
});

test("llama.cpp's error in the middle of a reply is shown in its words, and Retry completes the reply", async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'Tell me about caches [[fault:llamacppx1]]');
  const notice = page.locator('.notice', { hasText: 'KV cache is full' });
  await notice.waitFor({ timeout: 20_000 });
  assert.match(await notice.innerText(), /the KV cache is full: try a shorter prompt or a larger context \(-c\)/);
  const failed = page.locator('.turn[data-role="assistant"]', { has: page.locator('.badge.error') });
  await failed.waitFor({ timeout: 20_000 });
  assert.ok((await failed.locator('.turn-text').innerText()).startsWith('Demo model here'), 'the partial reply is kept');
  await page.getByRole('button', { name: 'Retry' }).click();
  await page
    .locator('.turn[data-role="assistant"] .turn-text', { hasText: 'real endpoint for real answers' })
    .waitFor({ timeout: 30_000 });
  await replyDone(page);
  assert.equal(await page.getByRole('button', { name: 'Retry' }).count(), 0, 'nothing left to retry');
  assert.deepEqual(page.problems, []);
  await page.close();
});

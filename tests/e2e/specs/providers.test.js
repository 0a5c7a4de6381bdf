// Provider profiles: the single settings of an earlier version become the first profile; two profiles
// on the dev server with the model list from the endpoint; a session switched from one model to the
// other mid-conversation, each reply labelled with its model, in the export too, never the keys; an
// endpoint that lists no models falls back to free text and says why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useServerAndBrowser, openPage, ready, replyDone, send, exportArchive } from '../harness.js';

const app = useServerAndBrowser();

/** The page's problems, but for the failed load of a model list the test asks for on purpose. */
const unexpected = (page) => page.problems.filter((p) => !/404|Failed to load resource/.test(p));

async function openSettings(page) {
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Settings' });
  await dialog.waitFor();
  return dialog;
}

/** Adds a profile from the dev server's preset, named `name`, with `model` and `key`. */
async function addDevProfile(dialog, { name, model, key, baseUrl }) {
  await dialog.getByRole('button', { name: 'Add profile' }).click();
  await dialog.locator('select.preset').selectOption({ label: 'Demo (dev server)' });
  await dialog.getByLabel('Profile name').fill(name);
  if (baseUrl) await dialog.getByLabel('Base URL').fill(baseUrl);
  await dialog.getByLabel('Default model').fill(model);
  await dialog.getByLabel(/API key/).fill(key);
}

async function openPicker(page) {
  await page.locator('.model-button').click();
  const menu = page.getByRole('dialog', { name: 'Model for this session' });
  await menu.waitFor();
  return menu;
}

test('the settings of an earlier version become the first profile, key and all', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.evaluate((base) => {
    localStorage.removeItem('cowork.profiles');
    localStorage.setItem('cowork.settings', JSON.stringify({
      kind: 'openai', base_url: base, model: 'demo-large', api_key: 'sk-from-before',
      context_window: 65536, output_reserve: 4096, orchestrator_url: '',
    }));
  }, `${app.server.url}v1`);
  await page.reload();
  await ready(page);
  assert.equal((await page.locator('.model-label').innerText()).trim(), 'demo-large');
  assert.equal((await page.locator('.profile-label').innerText()).trim(), 'Demo (dev server)');
  const dialog = await openSettings(page);
  assert.equal(await dialog.getByLabel(/API key/).inputValue(), 'sk-from-before');
  assert.equal(await dialog.getByLabel('Context window').inputValue(), '65536');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, 'hello from before');
  await page.locator('.turn[data-role="assistant"]', { hasText: 'Demo model "demo-large" here' }).waitFor({ timeout: 20_000 });
  await replyDone(page);
  assert.deepEqual(unexpected(page), []);
  await page.close();
});

test('two profiles, the listed models, a model switched mid-session, each reply labelled and exported', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  let dialog = await openSettings(page);
  await dialog.getByLabel('Profile name').fill('Local A');
  await dialog.getByLabel('Default model').fill('demo');
  await dialog.getByLabel(/API key/).fill('sk-profile-a-secret');
  await addDevProfile(dialog, { name: 'Local B', model: 'demo-large', key: 'sk-profile-b-secret' });
  await dialog.getByLabel('New sessions use this profile').check();
  // A profile needs a name of its own.
  await addDevProfile(dialog, { name: 'local a', model: 'demo', key: '' });
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.locator('.field-error', { hasText: 'Another profile has this name' }).waitFor();
  await dialog.getByRole('button', { name: 'Delete profile' }).click();
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.waitFor({ state: 'detached' });

  // New sessions take the default profile's default model.
  await page.getByRole('button', { name: '+ New session' }).click();
  assert.equal((await page.locator('.profile-label').innerText()).trim(), 'Local B');
  assert.equal((await page.locator('.model-label').innerText()).trim(), 'demo-large');
  // The picker lists the endpoint's models; the first message goes to Local A's demo.
  let menu = await openPicker(page);
  await menu.locator('select.profile-select').selectOption({ label: 'Local A' });
  const models = menu.locator('select.model-select');
  await models.waitFor({ timeout: 20_000 });
  assert.deepEqual(await models.locator('option').allInnerTexts(), ['demo', 'demo-large']);
  await menu.getByRole('button', { name: 'Done' }).click();
  assert.equal((await page.locator('.model-label').innerText()).trim(), 'demo model');
  await send(page, 'first question for the small model');
  await page.locator('.turn[data-role="assistant"]', { hasText: 'Demo model here' }).waitFor({ timeout: 20_000 });
  await replyDone(page);

  // Switched mid-session to Local B's demo-large: the session continues with the other model.
  menu = await openPicker(page);
  await menu.locator('select.profile-select').selectOption({ label: 'Local B' });
  await menu.locator('select.model-select').waitFor({ timeout: 20_000 });
  await menu.locator('select.model-select').selectOption('demo-large');
  await menu.getByRole('button', { name: 'Done' }).click();
  await send(page, 'second question for the large model');
  await page.locator('.turn[data-role="assistant"]', { hasText: 'Demo model "demo-large" here' }).waitFor({ timeout: 20_000 });
  await replyDone(page);
  const labels = await page.locator('.turn[data-role="assistant"] .turn-model').allInnerTexts();
  assert.deepEqual(labels.map((l) => l.trim()), ['demo', 'demo-large'], 'each reply shows the model that wrote it');

  // The archive records each reply's model; no key is in the export.
  const lines = await exportArchive(page);
  const session = lines.find((l) => l.type === 'session' && l.title?.includes('first question for the small model'));
  assert.ok(session, 'the session is exported');
  assert.equal(session.model, 'demo-large', 'the session holds the model it uses now');
  const replies = lines.filter((l) => l.type === 'turn' && l.session_id === session.id && l.role === 'assistant');
  assert.deepEqual(replies.map((t) => t.metadata.model), ['demo', 'demo-large']);
  const text = JSON.stringify(lines);
  for (const key of ['sk-profile-a-secret', 'sk-profile-b-secret', 'sk-from-before']) {
    assert.ok(!text.includes(key), `${key} is never exported`);
  }

  // After a reload the session still talks to Local B's demo-large; a new conversation to the default.
  await page.reload();
  await ready(page);
  await page.locator('.session', { hasText: 'first question for the small model' }).click();
  await page.locator('.turn[data-role="assistant"] .turn-model', { hasText: 'demo-large' }).waitFor();
  assert.equal((await page.locator('.profile-label').innerText()).trim(), 'Local B');
  assert.equal((await page.locator('.model-label').innerText()).trim(), 'demo-large');
  assert.deepEqual(unexpected(page), []);
  await page.close();
});

test('an endpoint without a model list takes the model as free text and says why', async () => {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  const dialog = await openSettings(page);
  await addDevProfile(dialog, { name: 'Unlisted', model: 'demo', key: 'sk-unlisted-secret', baseUrl: `${app.server.url}unlisted/v1` });
  await dialog.getByRole('button', { name: 'Test connection' }).click();
  await dialog.locator('.connection-result', { hasText: 'Connected' }).waitFor({ timeout: 20_000 });
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByRole('button', { name: '+ New session' }).click();
  const menu = await openPicker(page);
  await menu.locator('select.profile-select').selectOption({ label: 'Unlisted' });
  const note = menu.locator('.model-list-failed');
  await note.waitFor({ timeout: 20_000 });
  assert.match(await note.innerText(), /did not list its models/);
  assert.match(await note.innerText(), /Type the model's name/);
  const input = menu.locator('input.model-input');
  await input.fill('demo-large');
  await input.press('Enter');
  await menu.getByRole('button', { name: 'Done' }).click();
  assert.equal((await page.locator('.model-label').innerText()).trim(), 'demo-large');
  await send(page, 'a question for the unlisted endpoint');
  await page.locator('.turn[data-role="assistant"]', { hasText: 'Demo model "demo-large" here' }).waitFor({ timeout: 20_000 });
  await replyDone(page);
  assert.equal((await page.locator('.turn[data-role="assistant"] .turn-model').last().innerText()).trim(), 'demo-large');
  const lines = await exportArchive(page);
  assert.ok(!JSON.stringify(lines).includes('sk-unlisted-secret'), 'the key is never exported');
  assert.deepEqual(unexpected(page), []);
  await page.close();
});

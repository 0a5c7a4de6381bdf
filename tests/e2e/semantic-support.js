// What the recall-by-meaning end-to-end specs share: the fact and its paraphrase, a session that holds
// the fact, the Storage panel's section, and a Ctrl+K search.
import { openPage, ready, replyDone, send } from './harness.js';

export const FACT = 'Note for later: the auth tokens expire after an hour and refresh silently.';
// Shares no word, nor any form of one, with FACT (nor with the demo model's replies): only its
// meaning leads there. (The words are stemmed: "expires" would find "expire".)
export const PARAPHRASE = 'how long does login stay valid';

/** Opens Storage; resolves to its "Recall by meaning" section. */
export async function openStorage(page) {
  await page.locator('.storage-usage').click();
  const dialog = page.getByRole('dialog', { name: 'Storage' });
  await dialog.waitFor();
  return dialog.getByRole('region', { name: 'Recall by meaning' });
}

export async function closeStorage(page) {
  await page.getByRole('dialog', { name: 'Storage' }).getByRole('button', { name: 'Close' }).click();
}

/** Ctrl+K with `text`; resolves to the hits' texts once the list has settled. */
export async function searchAll(page, text) {
  await page.keyboard.press('Control+k');
  const box = page.getByRole('combobox', { name: 'Search all sessions' });
  await box.fill(text);
  await page.waitForTimeout(1500);
  const hits = await page.locator('.hit').allInnerTexts();
  await box.press('Escape');
  return hits;
}

/** A new page of `app` with a new session holding FACT and one more exchange. */
export async function pageWithFact(app) {
  const page = await openPage(app.browser.context, app.server.url);
  await ready(page);
  await page.getByRole('button', { name: '+ New session' }).click();
  await send(page, FACT);
  await replyDone(page);
  await send(page, 'Also: the staging cluster has three nodes.');
  await replyDone(page);
  return page;
}

// The two builds of the embedder (scripts/semantic.sh): SIMD128 and relaxed SIMD, whose 8-bit kernels
// differ (semantic/src/int8.rs). Both must give the same vectors, and they must be the model's: within
// a cosine of 0.99 of the model in floats (0.97 for a one-word text, where the 8-bit rounding weighs most),
// which gives the values sentence-transformers publishes. The
// worker picks the relaxed build where the browser validates relaxed SIMD, as headless Chromium does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useServerAndBrowser } from '../harness.js';

const app = useServerAndBrowser();

// The first values of "hello world" by sentence-transformers (all-MiniLM-L6-v2, in floats; from
// fastembed's test suite, as semantic/tests/embed.rs uses them).
const HELLO_WORLD = [-0.034478, 0.03102, 0.00673, 0.02611, -0.039362];
const TEXTS = [
  'hello world',
  'What did we decide about logging in?',
  'The auth tokens expire after an hour and the login flow refreshes them, unless the user signed out.',
  'ok',
];

test('both builds of the embedder give the same vectors, the model\'s own', async () => {
  const page = await app.browser.context.newPage();
  await page.goto(`${app.server.url}/`);
  const result = await page.evaluate(async (texts) => {
    const get = async (f) => new Uint8Array(await (await fetch(`/models/all-MiniLM-L6-v2/${f}`)).arrayBuffer());
    const files = [await get('config.json'), await get('tokenizer.json'), await get('model.safetensors')];
    const out = {};
    for (const name of ['semantic', 'semantic_relaxed']) {
      const module = await import(`/semantic/${name}.js`);
      await module.default();
      const embedder = new module.SemanticEmbedder(...files);
      out[name] = Array.from(embedder.embed(texts));
      embedder.free();
      if (name === 'semantic') {
        const floats = module.SemanticEmbedder.withFloats(...files);
        out.floats = Array.from(floats.embed(texts));
        floats.free();
      }
    }
    // What the worker decides for this browser (its detection, run here on the same bytes).
    const worker = new Worker('/semantic/semantic-worker.js', { type: 'module' });
    out.runtime = await new Promise((ok) => {
      worker.onmessage = (e) => {
        if (e.data.type === 'loaded') ok(e.data.runtime);
        if (e.data.type === 'error') ok(e.data.message);
      };
      worker.postMessage({ type: 'load', id: 1, base_url: `${location.origin}/models/all-MiniLM-L6-v2/`, model: 'all-MiniLM-L6-v2' });
    });
    worker.terminate();
    return out;
  }, TEXTS);

  const dims = 384;
  assert.equal(result.semantic.length, TEXTS.length * dims);
  const worst = result.semantic.reduce((m, v, i) => Math.max(m, Math.abs(v - result.semantic_relaxed[i])), 0);
  assert.ok(worst < 1e-5, `the two builds differ by up to ${worst}`);
  HELLO_WORLD.forEach((want, i) => {
    const got = result.floats[i];
    assert.ok(Math.abs(got - want) < 1e-3, `value ${i} of "hello world" in floats: ${got}, sentence-transformers ${want}`);
  });
  const vector = (v, t) => v.slice(t * dims, (t + 1) * dims);
  const cosine = (a, b) => a.reduce((s, v, i) => s + v * b[i], 0);
  TEXTS.forEach((text, t) => {
    const near = cosine(vector(result.semantic, t), vector(result.floats, t));
    const least = text.includes(' ') ? 0.99 : 0.97;
    assert.ok(near >= least, `${JSON.stringify(text)}: cosine ${near} between the 8-bit and the float vectors`);
  });
  // A paraphrase is nearer than an unrelated short reply.
  const v = (t) => vector(result.semantic, t);
  assert.ok(cosine(v(1), v(2)) > cosine(v(1), v(3)) + 0.1);
  assert.equal(result.runtime, 'semantic_relaxed', 'headless Chromium has relaxed SIMD: the worker uses that build');
  await page.close();
});

// Post-build step (scripts/post-build.sh), first, in release builds: minifies wasm-bindgen's JavaScript glue of the app
// (cowork-web-<hash>.js, an ES module) and of the storage worker (storage-worker.js, a classic script
// that defines the global `wasm_bindgen`), both part of the cold start, with the esbuild the highlighter
// is bundled with; and gives the page the new integrity of every file it names that changed (Trunk's
// subresource integrity). Trunk's own `minify` cannot parse the glue, and would rewrite the page as well.
// Export names, globals and the property names the wasm imports by are kept: esbuild renames only local
// names and does not bundle.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) throw new Error('run by Trunk as a post_build hook (TRUNK_STAGING_DIR is not set)');
if (process.env.TRUNK_PROFILE !== 'release') process.exit(0); // a debug build keeps its glue readable
const esbuild = 'web/highlight/node_modules/.bin/esbuild';
const glue = readdirSync(dir).filter((f) => /^cowork-web-[0-9a-f]+\.js$/.test(f) || f === 'storage-worker.js');
if (glue.length !== 2) throw new Error(`minify-glue: expected the app's and the worker's glue in ${dir}, found ${glue.join(', ') || 'neither'}`);
const page = join(dir, 'index.html');
let html = readFileSync(page, 'utf8');
for (const name of glue) {
  const file = join(dir, name);
  const minified = execFileSync(esbuild, [file, '--minify', '--log-level=warning', '--charset=utf8'], { maxBuffer: 1 << 26 });
  writeFileSync(file, minified);
  const integrity = `sha384-${createHash('sha384').update(minified).digest('base64')}`;
  html = html.replace(new RegExp(`(href="/${name.replace('.', '\\.')}"[^>]*integrity=")sha384-[^"]+`), `$1${integrity}`);
}
writeFileSync(page, html);

// Writes the licence header of a bundle (scripts/sync-bundle.sh, scripts/mcp-bundle.sh) to stdout, from
// esbuild's metafile (argv[2]) and a title (argv[3]): each bundled package's name, version and licence,
// then each distinct licence text once, so the licences travel with the code.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const inputs = Object.keys(JSON.parse(readFileSync(process.argv[2], 'utf8')).inputs);
const roots = [...new Set(inputs.map((p) => p.match(/^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//)?.[1]).filter(Boolean))].sort();
const texts = new Map();
const lines = roots.map((root) => {
  const { name, version, license } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const file = readdirSync(root).find((f) => /^(licen[cs]e|copying)/i.test(f));
  const text = file ? readFileSync(join(root, file), 'utf8').trim() : `${license} (no licence file in the package)`;
  texts.set(text, [...(texts.get(text) ?? []), name]);
  return ` * ${name} ${version} (${license})`;
});
const body = [...texts].map(([text, names]) => ` * --- ${names.join(', ')} ---\n${text.replaceAll('*/', '* /')}`);
console.log(`/*! ${process.argv[3]}, bundled with:\n${lines.join('\n')}\n *\n${body.join('\n\n')}\n*/`);

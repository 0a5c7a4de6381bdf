// Trunk post-build hook: gives dist/index.html a strict Content-Security-Policy (spec §12). Scripts run
// only from this origin, plus the one inline module Trunk writes to start the app, allowed by its hash
// (computed here from this build's page); styles only from this origin's stylesheet; no plugins, no
// <base>, no form posts. Images may come from blob: URLs (attachments, made from their archived bytes). Model and orchestrator endpoints are the user's choice, so `connect-src` is open.
import { readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';

const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) throw new Error('run by Trunk as a post_build hook (TRUNK_STAGING_DIR is not set)');
const file = join(dir, 'index.html');
const html = readFileSync(file, 'utf8');
const inline = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(
  (m) => `'sha256-${createHash('sha256').update(m[1], 'utf8').digest('base64')}'`,
);
const policy = [
  "default-src 'self'",
  `script-src 'self' 'wasm-unsafe-eval' ${inline.join(' ')}`.trim(),
  "style-src 'self'",
  "img-src 'self' data: blob:",
  'connect-src *',
  "worker-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');
const meta = `<meta http-equiv="Content-Security-Policy" content="${policy}" />`;
if (!html.includes('<meta charset="utf-8" />')) throw new Error('index.html has no <meta charset> to put the policy after');
// First in <head> after the charset, so it applies to every script and style that follows.
writeFileSync(file, html.replace('<meta charset="utf-8" />', `$&\n    ${meta}`));

// The code highlighter, loaded by the app (web/src/highlight.rs) the first time a finished code block
// is on screen, never at start. highlight.js's core and the languages below, bundled into one ES module
// by scripts/highlight.sh. Only code text goes in; what comes out is highlight.js's HTML, in which the
// code's text is escaped and the only markup is its own <span class="hljs-…"> elements.
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import csharp from 'highlight.js/lib/languages/csharp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import dockerfile from 'highlight.js/lib/languages/dockerfile';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import kotlin from 'highlight.js/lib/languages/kotlin';
import makefile from 'highlight.js/lib/languages/makefile';
import markdown from 'highlight.js/lib/languages/markdown';
import php from 'highlight.js/lib/languages/php';
import plaintext from 'highlight.js/lib/languages/plaintext';
import python from 'highlight.js/lib/languages/python';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import swift from 'highlight.js/lib/languages/swift';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const LANGUAGES = {
  bash, c, cpp, csharp, css, diff, dockerfile, go, ini, java, javascript, json, kotlin, makefile, markdown,
  php, plaintext, python, ruby, rust, shell, sql, swift, typescript, xml, yaml,
};
// TOML is highlighted as INI (highlight.js has no TOML of its own; `toml` is one of ini's aliases), and
// `sh`, `py`, `js`, `ts`, `html`, `yml`, … are the languages' own aliases.
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);
hljs.registerAliases(['jsonc', 'json5'], { languageName: 'json' });

/**
 * `code` (plain text) highlighted as `language` (a name or alias, any case), as HTML; `undefined` when
 * the language is not one of those bundled (the block then stays plain).
 */
export function highlight(code, language) {
  const name = String(language ?? '').toLowerCase();
  if (!name || !hljs.getLanguage(name)) return undefined;
  return hljs.highlight(String(code), { language: name, ignoreIllegals: true }).value;
}

// An MCP server's elicitation request (form mode, spec §16) as a form in the page: a `<dialog>` built
// from the requested schema (a flat object of primitive fields, as the specification restricts it),
// labelled fields the keyboard reaches, the browser's own validation, and Accept / Decline / Cancel
// (Esc cancels). `fieldsOf` and `contentOf` are the pure part (tested in node); `askUser` shows it.

/** The form's fields, in the schema's order: `{name, label, description, kind, required, ...}`, where
 * `kind` is "text" (with `format`, `minLength`, `maxLength`), "number", "integer" (with `minimum`,
 * `maximum`), "boolean", "choice" (one of `options`, `{value, label}`) or "choices" (any of them). */
export function fieldsOf(schema) {
  const required = new Set(Array.isArray(schema?.required) ? schema.required : []);
  return Object.entries(schema?.properties ?? {}).map(([name, p = {}]) => {
    const field = { name, label: String(p.title ?? name), description: String(p.description ?? ''), required: required.has(name), default: p.default };
    const options = optionsOf(p);
    if (p.type === 'array') return { ...field, kind: 'choices', options: optionsOf(p.items ?? {}), minItems: p.minItems, maxItems: p.maxItems };
    if (options) return { ...field, kind: 'choice', options };
    if (p.type === 'boolean') return { ...field, kind: 'boolean' };
    if (p.type === 'number' || p.type === 'integer') return { ...field, kind: p.type, minimum: p.minimum, maximum: p.maximum };
    return { ...field, kind: 'text', format: p.format, minLength: p.minLength, maxLength: p.maxLength };
  });
}

// An enum's options: `enum` (with the legacy `enumNames`), or `oneOf`/`anyOf` of `{const, title}`.
function optionsOf(p) {
  if (Array.isArray(p.enum)) return p.enum.map((value, i) => ({ value: String(value), label: String(p.enumNames?.[i] ?? value) }));
  const titled = p.oneOf ?? p.anyOf;
  if (Array.isArray(titled)) return titled.map((o) => ({ value: String(o.const), label: String(o.title ?? o.const) }));
  return undefined;
}

/**
 * The answer's `content` from the form's raw values (`{name: string | boolean | string[]}`): numbers
 * as numbers, an empty optional field left out. Returns `{content}` or `{errors: [text…]}`.
 */
export function contentOf(fields, raw) {
  const content = {};
  const errors = [];
  for (const f of fields) {
    const value = raw[f.name];
    if (f.kind === 'boolean') {
      content[f.name] = value === true;
      continue;
    }
    if (f.kind === 'choices') {
      const picked = Array.isArray(value) ? value : [];
      if (f.required && picked.length === 0) errors.push(`${f.label}: choose at least one.`);
      else if (picked.length > 0 && f.minItems !== undefined && picked.length < f.minItems) errors.push(`${f.label}: choose at least ${f.minItems}.`);
      else if (f.maxItems !== undefined && picked.length > f.maxItems) errors.push(`${f.label}: choose at most ${f.maxItems}.`);
      if (picked.length > 0 || f.required) content[f.name] = picked;
      continue;
    }
    const text = String(value ?? '').trim();
    if (text === '') {
      if (f.required) errors.push(`${f.label}: required.`);
      continue;
    }
    if (f.kind === 'number' || f.kind === 'integer') {
      const n = Number(text);
      if (!Number.isFinite(n) || (f.kind === 'integer' && !Number.isInteger(n))) errors.push(`${f.label}: ${f.kind === 'integer' ? 'a whole number' : 'a number'}, please.`);
      else if (f.minimum !== undefined && n < f.minimum) errors.push(`${f.label}: at least ${f.minimum}.`);
      else if (f.maximum !== undefined && n > f.maximum) errors.push(`${f.label}: at most ${f.maximum}.`);
      else content[f.name] = n;
      continue;
    }
    if (f.kind === 'choice' && !f.options.some((o) => o.value === text)) {
      errors.push(`${f.label}: choose one of the options.`);
      continue;
    }
    if (f.format === 'email' && !/^[^@\s]+@[^@\s]+$/.test(text)) errors.push(`${f.label}: an email address, please.`);
    else if (f.format === 'uri' && !URL.canParse(text)) errors.push(`${f.label}: a full address (https://…), please.`);
    else if (f.minLength !== undefined && text.length < f.minLength) errors.push(`${f.label}: at least ${f.minLength} characters.`);
    else if (f.maxLength !== undefined && text.length > f.maxLength) errors.push(`${f.label}: at most ${f.maxLength} characters.`);
    else content[f.name] = f.format === 'date-time' && !Number.isNaN(Date.parse(text)) ? new Date(text).toISOString() : text;
  }
  return errors.length ? { errors } : { content };
}

const INPUT_TYPES = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' };
let next = 0;

/**
 * Shows server `server`'s request (`{message, requestedSchema}`) as a modal form in `container` (the
 * app's root); resolves with the answer (`{action: "accept", content}`, `{action: "decline"}` or
 * `{action: "cancel"}`). `signal` aborting (the request cancelled, Stop) closes it as cancelled.
 */
export function askUser(server, params, { container = document.body, signal } = {}) {
  const fields = fieldsOf(params?.requestedSchema);
  const id = `mcp-elicit-${++next}`;
  const el = (tag, props = {}, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) if (v !== undefined && v !== false) e.setAttribute(k, v === true ? '' : String(v));
    e.append(...children);
    return e;
  };
  const dialog = el('dialog', { class: 'dialog mcp-elicit', 'aria-labelledby': `${id}-title`, 'aria-describedby': `${id}-message` });
  const form = el('form', { novalidate: true });
  const problems = el('p', { class: 'mcp-elicit-problems', role: 'alert' });
  form.append(el('h2', { id: `${id}-title` }, `The MCP server ${server} asks`), el('p', { id: `${id}-message`, class: 'mcp-elicit-message' }, String(params?.message ?? '')));
  fields.forEach((f, i) => form.append(fieldView(el, f, `${id}-${i}`)));
  const button = (action, text, cls) => el('button', { type: action === 'accept' ? 'submit' : 'button', value: action, class: cls }, text);
  const accept = button('accept', 'Accept', 'primary');
  const decline = button('decline', 'Decline', 'secondary');
  const cancel = button('cancel', 'Cancel', 'secondary');
  form.append(problems, el('div', { class: 'dialog-actions' }, cancel, decline, accept));
  dialog.append(form);
  return new Promise((resolve) => {
    const done = (answer) => {
      signal?.removeEventListener('abort', onAbort);
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    const onAbort = () => done({ action: 'cancel' });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const answer = contentOf(fields, rawValues(form, fields));
      if (answer.errors) {
        problems.textContent = answer.errors.join(' ');
        return;
      }
      done({ action: 'accept', content: answer.content });
    });
    decline.addEventListener('click', () => done({ action: 'decline' }));
    cancel.addEventListener('click', () => done({ action: 'cancel' }));
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      done({ action: 'cancel' });
    });
    if (signal?.aborted) return resolve({ action: 'cancel' });
    signal?.addEventListener('abort', onAbort);
    container.append(dialog);
    dialog.showModal();
  });
}

function fieldView(el, f, id) {
  const help = f.description ? el('small', { id: `${id}-help`, class: 'mcp-elicit-help' }, f.description) : '';
  const described = f.description ? `${id}-help` : undefined;
  const label = `${f.label}${f.required ? ' (required)' : ''}`;
  if (f.kind === 'boolean') {
    return el('div', { class: 'field mcp-elicit-field' }, el('label', {}, el('input', { type: 'checkbox', name: f.name, checked: f.default === true, 'aria-describedby': described }), ` ${label}`), help);
  }
  if (f.kind === 'choices') {
    const chosen = new Set(Array.isArray(f.default) ? f.default.map(String) : []);
    const boxes = f.options.map((o) => el('label', {}, el('input', { type: 'checkbox', name: f.name, value: o.value, checked: chosen.has(o.value) }), ` ${o.label}`));
    return el('fieldset', { class: 'field mcp-elicit-field', 'aria-describedby': described }, el('legend', {}, label), ...boxes, help);
  }
  let control;
  if (f.kind === 'choice') {
    const options = f.options.map((o) => el('option', { value: o.value, selected: String(f.default) === o.value }, o.label));
    control = el('select', { id, name: f.name, required: f.required, 'aria-describedby': described }, ...(f.required && f.default === undefined ? [el('option', { value: '' }, 'Choose…')] : [el('option', { value: '' }, '—')]), ...options);
  } else {
    const numeric = f.kind === 'number' || f.kind === 'integer';
    control = el('input', {
      id,
      name: f.name,
      type: numeric ? 'number' : INPUT_TYPES[f.format] ?? 'text',
      step: f.kind === 'integer' ? '1' : numeric ? 'any' : undefined,
      min: f.minimum,
      max: f.maximum,
      minlength: f.minLength,
      maxlength: f.maxLength,
      required: f.required,
      value: f.default === undefined ? undefined : String(f.default),
      'aria-describedby': described,
    });
  }
  return el('div', { class: 'field mcp-elicit-field' }, el('label', { for: id }, label), control, help);
}

function rawValues(form, fields) {
  const raw = {};
  for (const f of fields) {
    const inputs = [...form.elements].filter((e) => e.name === f.name);
    if (f.kind === 'boolean') raw[f.name] = inputs[0]?.checked === true;
    else if (f.kind === 'choices') raw[f.name] = inputs.filter((e) => e.checked).map((e) => e.value);
    else raw[f.name] = inputs[0]?.value ?? '';
  }
  return raw;
}

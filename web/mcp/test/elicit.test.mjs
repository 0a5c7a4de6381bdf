// An elicitation request's form (elicit.mjs), its pure part: the fields a requested schema makes, and
// the answer's content from what the user entered (numbers as numbers, what was left empty left out,
// what breaks the schema refused with a line naming the field).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contentOf, fieldsOf, progressText } from '../index.mjs';

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Full name', description: 'As on your passport', minLength: 2 },
    email: { type: 'string', format: 'email' },
    age: { type: 'integer', minimum: 0, maximum: 150 },
    score: { type: 'number' },
    subscribe: { type: 'boolean', default: true },
    color: { type: 'string', enum: ['red', 'green'], enumNames: ['Red', 'Green'] },
    size: { type: 'string', oneOf: [{ const: 's', title: 'Small' }, { const: 'l', title: 'Large' }] },
    tags: { type: 'array', items: { anyOf: [{ const: 'a', title: 'A' }, { const: 'b', title: 'B' }] }, maxItems: 1 },
  },
  required: ['name', 'age'],
};

test('the fields: labelled by title (else name), each kind with its options and limits, in order', () => {
  const fields = fieldsOf(schema);
  assert.deepEqual(fields.map((f) => [f.name, f.kind, f.label, f.required]), [
    ['name', 'text', 'Full name', true],
    ['email', 'text', 'email', false],
    ['age', 'integer', 'age', true],
    ['score', 'number', 'score', false],
    ['subscribe', 'boolean', 'subscribe', false],
    ['color', 'choice', 'color', false],
    ['size', 'choice', 'size', false],
    ['tags', 'choices', 'tags', false],
  ]);
  assert.equal(fields[0].description, 'As on your passport');
  assert.deepEqual(fields[5].options, [{ value: 'red', label: 'Red' }, { value: 'green', label: 'Green' }]);
  assert.deepEqual(fields[6].options, [{ value: 's', label: 'Small' }, { value: 'l', label: 'Large' }]);
  assert.deepEqual(fields[7].options.map((o) => o.value), ['a', 'b']);
  assert.deepEqual([fields[2].minimum, fields[2].maximum], [0, 150]);
  assert.equal(fields[4].default, true);
  assert.deepEqual(fieldsOf(undefined), [], 'no schema, no fields');
});

test('the content: typed values, empty optional fields left out', () => {
  const fields = fieldsOf(schema);
  const raw = { name: ' Ada ', email: '', age: '36', score: '2.5', subscribe: false, color: 'green', size: '', tags: ['b'] };
  assert.deepEqual(contentOf(fields, raw), { content: { name: 'Ada', age: 36, score: 2.5, subscribe: false, color: 'green', tags: ['b'] } });
});

test('what breaks the schema is refused, each field named', () => {
  const fields = fieldsOf(schema);
  const { errors } = contentOf(fields, { name: 'A', email: 'nobody', age: '3.5', score: 'many', color: 'blue', tags: ['a', 'b'] });
  assert.deepEqual(errors, [
    'Full name: at least 2 characters.',
    'email: an email address, please.',
    'age: a whole number, please.',
    'score: a number, please.',
    'color: choose one of the options.',
    'tags: choose at most 1.',
  ]);
  assert.deepEqual(contentOf(fields, {}).errors, ['Full name: required.', 'age: required.']);
  assert.deepEqual(contentOf(fields, { name: 'Ada', age: '200' }).errors, ['age: at most 150.']);
});

test("a progress notification's line", () => {
  assert.equal(progressText({ progress: 3, total: 10, message: 'copying' }), 'Progress 3 of 10: copying');
  assert.equal(progressText({ progress: 0.5 }), 'Progress 0.5');
});

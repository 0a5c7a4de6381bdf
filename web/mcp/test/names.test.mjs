// How the model is offered a server's tools (servers.mjs): their names, and whether a call asks the
// user first by the server's policy and the tool's annotations (cases once in core's Rust tests).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asks, policyOf, readOnly, toolName } from '../index.mjs';

test('tool names are namespaced by server and valid for every provider', () => {
  assert.equal(toolName('everything', 'echo'), 'everything__echo');
  assert.equal(toolName('my server', 'get.weather'), 'my_server__get_weather');
  assert.equal(toolName('é', 'x/y'), '___x_y');
  const long = toolName('s'.repeat(40), 't'.repeat(40));
  assert.equal(long.length, 64, long);
  assert.equal(long, `${'s'.repeat(40)}__${'t'.repeat(22)}`);
});

test('approval follows the policy and never trusts read-only when the tool says it is destructive', () => {
  const server = (policy) => ({ id: 's1', name: 'fs', url: 'http://127.0.0.1:1/mcp', policy });
  const check = (policy, annotations, expect) =>
    assert.equal(asks(server(policy), { name: 't', annotations }), expect, `${policy} with ${JSON.stringify(annotations)}`);
  const readOnlyHint = { readOnlyHint: true };
  check('ask_unless_read_only', readOnlyHint, false);
  check('ask_unless_read_only', { readOnlyHint: true, destructiveHint: true }, true);
  check('ask_unless_read_only', {}, true);
  check('ask_unless_read_only', undefined, true);
  check('ask_unless_read_only', { readOnlyHint: 'true' }, true);
  check('always_ask', readOnlyHint, true);
  check('never_ask', { destructiveHint: true }, false);
  check(undefined, readOnlyHint, false); // a server saved without a policy: the default
  assert.equal(readOnly({ annotations: readOnlyHint }), true);
});

test("a tool's own policy overrides its server's", () => {
  const server = { id: 's1', name: 'fs', url: 'http://127.0.0.1:1/mcp', policy: 'never_ask', tools: [{ tool: 'write', policy: 'always_ask' }] };
  assert.equal(policyOf(server, 'write'), 'always_ask');
  assert.equal(policyOf(server, 'read'), 'never_ask');
  assert.equal(asks(server, { name: 'write', annotations: {} }), true);
  assert.equal(asks(server, { name: 'read', annotations: {} }), false);
  assert.equal(policyOf({ id: 's2', name: 'x', url: 'http://127.0.0.1:1/mcp' }, 'read'), 'ask_unless_read_only');
});

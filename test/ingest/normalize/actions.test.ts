// Tests of the action vocabulary mapping.
import { describe, it, expect } from 'vitest';
import { ACTION_VOCABULARY, mapAction, type Action } from '../../../src/ingest/normalize/index.js';

const expected: Record<Action, string[]> = {
  allow: [
    ...['allow', 'allowed', 'permit', 'permitted', 'pass', 'passed', 'accept', 'accepted', 'approve', 'approved', 'ok', 'success'],
    ...['succeeded', 'completed', 'error', 'errored', 'failed', 'failure'],
  ],
  deny: ['deny', 'denied', 'block', 'blocked', 'reject', 'rejected', 'refuse', 'refused', 'forbid', 'forbidden', 'drop', 'dropped'],
  redact: ['redact', 'redacted', 'mask', 'masked', 'sanitize', 'sanitized', 'scrub', 'scrubbed'],
  flag: ['flag', 'flagged', 'alert', 'alerted', 'warn', 'warned', 'review', 'audit', 'audited', 'suspicious'],
};

describe('mapAction', () => {
  it('exposes exactly the documented vocabulary', () => {
    expect(ACTION_VOCABULARY).toEqual(expected);
  });

  const table = (Object.keys(expected) as Action[]).flatMap((action) => expected[action].map((word) => [word, action] as const));
  it.each(table)('maps %s to %s', (word, action) => {
    expect(mapAction(word)).toEqual({ action, rawAction: null });
  });

  it.each([
    ['ALLOWED', 'allow'],
    ['  Denied\n', 'deny'],
    ['\tRedacted ', 'redact'],
    ['Suspicious', 'flag'],
    ['OK', 'allow'],
    ['SUCCESS', 'allow'],
  ] as const)('is case-insensitive and trims: %j -> %s', (word, action) => {
    expect(mapAction(word)).toEqual({ action, rawAction: null });
  });

  it.each([
    ['invoke', 'invoke'],
    ['  tools/call  ', 'tools/call'],
    ['allowed-ish', 'allowed-ish'],
    ['deny all', 'deny all'],
    ['Unknown', 'Unknown'],
  ])('keeps an unknown word %j as rawAction', (word, raw) => {
    expect(mapAction(word)).toEqual({ action: null, rawAction: raw });
  });

  it('truncates an unknown word to 200 characters', () => {
    const result = mapAction('x'.repeat(500));
    expect(result.action).toBeNull();
    expect(result.rawAction).toBe('x'.repeat(200));
  });

  it('does not split a surrogate pair when truncating', () => {
    const result = mapAction('a'.repeat(199) + '😀😀');
    expect(result.rawAction).toBe('a'.repeat(199));
  });

  it.each([[''], ['   '], [null], [undefined], [{}], [['deny']], [NaN], [Infinity], [Symbol('x')], [() => 'deny']])(
    'gives no action and no raw word for %s',
    (word) => {
      expect(mapAction(word)).toEqual({ action: null, rawAction: null });
    },
  );

  it('takes numbers and booleans as their text', () => {
    expect(mapAction(42)).toEqual({ action: null, rawAction: '42' });
    expect(mapAction(true)).toEqual({ action: null, rawAction: 'true' });
  });

  it('does not match inherited object keys', () => {
    expect(mapAction('constructor')).toEqual({ action: null, rawAction: 'constructor' });
    expect(mapAction('__proto__')).toEqual({ action: null, rawAction: '__proto__' });
  });
});

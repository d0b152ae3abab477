// The log audit itself: it finds a secret in each form a log line could carry it, so a clean result means something.
import { describe, expect, it } from 'vitest';
import { findLeaks } from './log-audit.js';

describe('log audit', () => {
  const secret = 'ask_Zx9-secret/with+chars"quote';
  it.each([
    ['as is', `{"msg":"x","key":"${secret}"}`],
    ['JSON-escaped', JSON.stringify({ msg: secret })],
    ['URL-encoded', `{"url":"/api?k=${encodeURIComponent(secret)}"}`],
    ['base64 (Basic auth)', `{"auth":"Basic ${Buffer.from(secret).toString('base64')}"}`],
  ])('finds a secret %s', (_, line) => {
    const leaks = findLeaks({ key: secret }, { app: `{"msg":"clean"}\n${line}\n{"msg":"clean"}` });
    expect(leaks).toHaveLength(1);
    expect(leaks[0].line).toBe(line);
  });

  it('reports nothing for clean logs', () => {
    expect(findLeaks({ key: secret }, { app: '{"msg":"[redacted]"}\n' })).toEqual([]);
  });
});

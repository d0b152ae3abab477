// loadConfig: defaults, coercion, and startup errors that name the bad variable without echoing secrets.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('loadConfig', () => {
  it('gives documented defaults for an empty environment', () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(3000);
    expect(c.DATA_DIR).toBe('./.data');
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.REDIS_URL).toBeUndefined();
    expect(c.SSE_HEARTBEAT_MS).toBe(15_000);
    expect(c.SSE_REPLAY_LIMIT).toBe(10_000);
    expect(c.SSE_BUFFER_LIMIT_BYTES).toBe(1024 * 1024);
    expect(c.SSE_RECENT_WINDOW_BYTES).toBe(8 * 1024 * 1024);
    expect(c.SSE_RECENT_WINDOW_TOTAL_BYTES).toBe(256 * 1024 * 1024);
    expect(c.BODY_LIMIT_BYTES).toBe(5 * 1024 * 1024);
    expect(c.INGEST_MAX_ENTRIES).toBe(10_000);
    expect(c.COOKIE_SECURE).toBe(false);
    expect(c.CORS_ORIGINS).toEqual([]);
  });

  it('coerces numbers, booleans and lists', () => {
    const c = loadConfig({ PORT: '8080', COOKIE_SECURE: 'true', CORS_ORIGINS: 'https://a.example, https://b.example', DATABASE_URL: '' });
    expect(c.PORT).toBe(8080);
    expect(c.COOKIE_SECURE).toBe(true);
    expect(c.CORS_ORIGINS).toEqual(['https://a.example', 'https://b.example']);
    expect(c.DATABASE_URL).toBeUndefined();
  });

  it('names each bad variable', () => {
    try {
      loadConfig({ PORT: 'eighty', SSE_HEARTBEAT_MS: '-5', LOG_LEVEL: 'loud' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const msg = (err as Error).message;
      expect(msg).toContain('PORT');
      expect(msg).toContain('SSE_HEARTBEAT_MS');
      expect(msg).toContain('LOG_LEVEL');
    }
  });

  it('does not echo secret values in the error', () => {
    expect(() => loadConfig({ ADMIN_TOKEN: 'short-secret', DATABASE_URL: 'not a url with password hunter2' })).toThrow(ConfigError);
    try {
      loadConfig({ ADMIN_TOKEN: 'short-secret', DATABASE_URL: 'not a url with password hunter2' });
    } catch (err) {
      const msg = (err as Error).message;
      expect(msg).toContain('ADMIN_TOKEN');
      expect(msg).not.toContain('short-secret');
      expect(msg).not.toContain('hunter2');
    }
  });
});

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

  it('reads REDIS_CLUSTER_NODES seeds: host:port, or URLs whose credentials and TLS apply to every node', () => {
    expect(loadConfig({}).REDIS_CLUSTER_NODES).toEqual([]);
    expect(loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, 10.0.0.2:7001' }).REDIS_CLUSTER_NODES).toEqual([
      { host: '10.0.0.1', port: 7000, tls: false, username: undefined, password: undefined },
      { host: '10.0.0.2', port: 7001, tls: false, username: undefined, password: undefined },
    ]);
    const c = loadConfig({ REDIS_CLUSTER_NODES: 'rediss://app:s%3Acret@node-a.example:6380,node-b.example:6380' });
    expect(c.REDIS_CLUSTER_NODES.map((s) => [s.host, s.port, s.username, s.password, s.tls])).toEqual([
      ['node-a.example', 6380, 'app', 's:cret', true],
      ['node-b.example', 6380, 'app', 's:cret', true],
    ]);
  });

  it('refuses a bad seed, REDIS_URL beside REDIS_CLUSTER_NODES, and a prefix with braces in cluster mode, hiding the seeds', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (err) {
        return (err as Error).message;
      }
      return '';
    };
    for (const bad of ['10.0.0.1', 'host:notaport', 'redis://h:1/2', 'rediss://u:hunter2@a:1,redis://u:other@b:1']) {
      const msg = problems({ REDIS_CLUSTER_NODES: bad });
      expect(msg, bad).toContain('REDIS_CLUSTER_NODES');
      expect(msg).not.toContain('hunter2');
    }
    expect(problems({ REDIS_CLUSTER_NODES: 'a:7000', REDIS_URL: 'redis://b:6379' })).toMatch(/REDIS_CLUSTER_NODES: set REDIS_URL .* not both/);
    expect(problems({ REDIS_CLUSTER_NODES: 'a:7000', REDIS_PREFIX: 'app{1}:' })).toContain('REDIS_PREFIX');
    // One Redis keeps any prefix it had.
    expect(loadConfig({ REDIS_URL: 'redis://b:6379', REDIS_PREFIX: 'app{1}:' }).REDIS_PREFIX).toBe('app{1}:');
  });
  it('reads the verifiable log settings: on by default, a host name for origins, bounded intervals', () => {
    const c = loadConfig({});
    expect([c.MERKLE_LOG, c.PUBLIC_HOST, c.CHECKPOINT_EVERY_EVENTS, c.CHECKPOINT_INTERVAL_MS, c.MERKLE_CATCHUP_EVENTS, c.SIGNING_KEY_FILE]).toEqual([true, 'localhost', 1000, 10000, 1000, undefined]);
    expect(loadConfig({ MERKLE_LOG: 'false', PUBLIC_HOST: 'audit.example.com:8443' })).toMatchObject({ MERKLE_LOG: false, PUBLIC_HOST: 'audit.example.com:8443' });
    for (const [name, bad] of [['PUBLIC_HOST', 'a b'], ['PUBLIC_HOST', 'a+b'], ['PUBLIC_HOST', 'a/orgs'], ['CHECKPOINT_EVERY_EVENTS', '0'], ['CHECKPOINT_INTERVAL_MS', '99'], ['MERKLE_CATCHUP_EVENTS', '0']]) {
      expect(() => loadConfig({ [name]: bad }), `${name}=${bad}`).toThrow(name);
    }
  });
});

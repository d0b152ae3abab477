// A TCP proxy of the suite's own between the app and Postgres: cut it (connections reset and refused) or black-hole it (silence).
import { connect, createServer, type Server, type Socket } from 'node:net';

export type ProxyMode = 'up' | 'refuse' | 'blackhole';

export interface FaultProxy {
  port: number;
  /** Host:port URL with the same credentials and database as `url`, but through the proxy. */
  via(url: string): string;
  /**
   * 'refuse': every open connection is reset and new ones are closed at once (the server is down).
   * 'blackhole': open connections stay open but nothing passes either way, and new ones are accepted and never answered
   * (a network partition, or a server frozen by SIGSTOP).
   * 'up': forwarding again (connections held during a black hole are dropped first: their protocol state is lost).
   */
  set(mode: ProxyMode): void;
  mode(): ProxyMode;
  /** Connections currently open from the app through the proxy. */
  openConnections(): number;
  close(): Promise<void>;
}

export async function startFaultProxy(targetHost: string, targetPort: number): Promise<FaultProxy> {
  let mode: ProxyMode = 'up';
  const pairs = new Set<{ client: Socket; upstream: Socket | null }>();

  const server: Server = createServer((client) => {
    client.on('error', () => undefined);
    if (mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    const pair: { client: Socket; upstream: Socket | null } = { client, upstream: null };
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      pair.upstream?.destroy();
    };
    client.on('close', drop);
    if (mode === 'blackhole') {
      // Accepted, never answered: the client's own timeouts are all that can end it.
      client.on('data', () => undefined);
      return;
    }
    const upstream = connect(targetPort, targetHost);
    pair.upstream = upstream;
    upstream.on('error', drop).on('close', drop);
    client.on('data', (chunk) => {
      if (mode === 'up') upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (mode === 'up') client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;

  const dropAll = (reset: boolean) => {
    for (const p of [...pairs]) {
      pairs.delete(p);
      if (reset) p.client.resetAndDestroy();
      else p.client.destroy();
      p.upstream?.destroy();
    }
  };

  return {
    port,
    via(url: string) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    set(next: ProxyMode) {
      const previous = mode;
      mode = next;
      if (next === 'refuse') dropAll(true);
      // Bytes swallowed during a black hole desynchronize the protocol on both ends: those connections cannot be resumed.
      if (next === 'up' && previous === 'blackhole') dropAll(true);
    },
    mode: () => mode,
    openConnections: () => pairs.size,
    async close() {
      mode = 'refuse';
      dropAll(true);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

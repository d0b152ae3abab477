// A TCP proxy of the test's own between the app and a service, which a fault test can cut or pause.
import { createServer, connect, type Socket, type Server } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Drops every open connection and refuses new ones until restore(). */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let down = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, targetHost);
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const cut = () => {
    down = true;
    for (const s of sockets) s.destroy();
    sockets.clear();
  };
  return {
    port: (server.address() as { port: number }).port,
    cut,
    restore() {
      down = false;
    },
    close() {
      cut();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

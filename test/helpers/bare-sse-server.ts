// A bare node:http server (no framework) that hands each request's response to a test as an open SSE stream.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SSE_HEADERS } from '../../src/stream/sse-format.js';

export interface BareSseServer {
  url: string;
  /** Resolves with the response of the next request, its SSE headers already written. */
  nextResponse(): Promise<ServerResponse>;
  close(): Promise<void>;
}

export async function startBareSseServer(): Promise<BareSseServer> {
  const waiting: ((res: ServerResponse) => void)[] = [];
  const arrived: ServerResponse[] = [];
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
    const w = waiting.shift();
    if (w) w(res);
    else arrived.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    nextResponse: () => {
      const r = arrived.shift();
      return r ? Promise.resolve(r) : new Promise((resolve) => waiting.push(resolve));
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

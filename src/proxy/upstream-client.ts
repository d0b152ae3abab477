// HTTP requests to upstream MCP servers: kept-alive connections, a guarded address lookup, bounded response heads,
// connect and overall deadlines, and only the MCP headers of the client passed on (never its credentials).
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { ForbiddenUpstreamAddress, guardedLookup, hostOf, isSpecialAddress } from './upstream-address.js';
import type { ResolvedUpstream } from './org-proxy-config.js';

/** Request headers of the client that reach the upstream; every other one (Authorization, Cookie, ...) stays here. */
const FORWARDED_REQUEST_HEADERS = ['accept', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'last-event-id', 'user-agent', 'traceparent', 'tracestate', 'baggage'];

/** Response headers of the upstream that reach the client. */
export const FORWARDED_RESPONSE_HEADERS = ['content-type', 'content-length', 'mcp-session-id', 'mcp-protocol-version', 'cache-control', 'retry-after'];

export interface UpstreamClientOptions {
  connectTimeoutMs: number;
  maxHeaderBytes: number;
  allowPrivate: boolean;
}

export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'DELETE';
  clientHeaders: IncomingHttpHeaders;
  body?: Buffer;
  signal: AbortSignal;
}

/** Why an upstream exchange failed before its response began. */
export type UpstreamFailure = 'unreachable' | 'forbidden_address' | 'timeout' | 'aborted';

export class UpstreamError extends Error {
  constructor(
    public readonly failure: UpstreamFailure,
    message: string,
  ) {
    super(message);
  }
}

export function upstreamHeaders(upstream: ResolvedUpstream, clientHeaders: IncomingHttpHeaders, body?: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const v = clientHeaders[name];
    if (typeof v === 'string') out[name] = v;
  }
  for (const [name, v] of Object.entries(clientHeaders)) {
    if (name.startsWith('mcp-param-') && typeof v === 'string') out[name] = v;
  }
  for (const [name, value] of upstream.headers) out[name.toLowerCase()] = value;
  if (body) out['content-length'] = String(body.length);
  return out;
}

export function createUpstreamClient(opts: UpstreamClientOptions) {
  const lookup = guardedLookup(opts.allowPrivate);
  const httpAgent = new http.Agent({ keepAlive: true, lookup } as http.AgentOptions);
  const httpsAgent = new https.Agent({ keepAlive: true, lookup } as https.AgentOptions);

  /** Sends the request; resolves with the response once its head arrived, or rejects with an UpstreamError. */
  function send(upstream: ResolvedUpstream, req: UpstreamRequest): Promise<IncomingMessage> {
    const url = upstream.url;
    const host = hostOf(url);
    if (!opts.allowPrivate && isIP(host) && isSpecialAddress(host)) return Promise.reject(new UpstreamError('forbidden_address', new ForbiddenUpstreamAddress(host).message));
    const secure = url.protocol === 'https:';
    return new Promise((resolve, reject) => {
      let connected = false;
      const r = (secure ? https : http).request(
        url,
        {
          method: req.method,
          headers: upstreamHeaders(upstream, req.clientHeaders, req.body),
          agent: secure ? httpsAgent : httpAgent,
          maxHeaderSize: opts.maxHeaderBytes,
          signal: req.signal,
        },
        (res) => resolve(res),
      );
      const connectTimer = setTimeout(() => {
        if (!connected) r.destroy(new UpstreamError('unreachable', `could not connect to the upstream within ${opts.connectTimeoutMs} ms`));
      }, opts.connectTimeoutMs);
      r.on('socket', (socket) => {
        socket.setNoDelay(true);
        if (!socket.connecting) connected = true;
        else socket.once(secure ? 'secureConnect' : 'connect', () => (connected = true));
      });
      r.on('response', () => clearTimeout(connectTimer));
      r.on('close', () => clearTimeout(connectTimer));
      r.on('error', (err: Error & { code?: string }) => {
        clearTimeout(connectTimer);
        if (err instanceof UpstreamError) return reject(err);
        if (req.signal.aborted) return reject(new UpstreamError(req.signal.reason === 'timeout' ? 'timeout' : 'aborted', String(req.signal.reason ?? 'aborted')));
        if (err.code === 'EUPSTREAMFORBIDDEN') return reject(new UpstreamError('forbidden_address', err.message));
        reject(new UpstreamError('unreachable', `upstream request failed: ${err.code ?? err.message}`));
      });
      r.end(req.body);
    });
  }

  return {
    send,
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

export type UpstreamClient = ReturnType<typeof createUpstreamClient>;

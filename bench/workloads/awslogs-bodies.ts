// CloudWatch Logs deliveries as a Lambda subscription forwards them: the subscription payload (event ids, ms times),
// gzipped, base64 in {"awslogs":{"data":...}}; every body new (its event ids unique), so each is sent once.
import { gzipSync } from 'node:zlib';
import { createLogGenerator } from './cloudwatch-lines.js';

/** A generator of awslogs bodies for one sender: `seed` makes its event ids its own. */
export function createAwslogsBodies(seed: number, size: number) {
  const gen = createLogGenerator(seed, size);
  let n = 0n;
  // CloudWatch event ids are 56-digit decimal strings; the sender's seed leads, a counter follows.
  const base = BigInt(seed) * 10n ** 40n + 10n ** 55n;
  return {
    next(): Buffer {
      const body = gen.next();
      const payload = {
        messageType: 'DATA_MESSAGE',
        owner: '123456789012',
        logGroup: body.logGroup,
        logStream: body.logStream,
        subscriptionFilters: ['audit-stream'],
        logEvents: body.events.map((e) => ({ id: String(base + n++), timestamp: Date.parse(e.timestamp), message: e.message })),
      };
      return Buffer.from(JSON.stringify({ awslogs: { data: gzipSync(JSON.stringify(payload)).toString('base64') } }));
    },
  };
}

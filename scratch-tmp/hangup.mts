import { connect } from 'node:net';
import { startApp, createOrg } from '../test/helpers/app.js';
import { mkdtempSync } from 'node:fs';
const app = await startApp({ DATA_DIR: mkdtempSync('/tmp/hang-') });
const org = await createOrg(app.url);
const port = Number(new URL(app.url).port);
for (const path of ['/api/v1/ingest/events', '/api/v1/auth/login', '/api/v1/ingest/cloudwatch']) {
  const s = connect(port, '127.0.0.1');
  s.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n[{"serverId":"a",`);
  await new Promise((r) => setTimeout(r, 300));
  s.destroy();
  await new Promise((r) => setTimeout(r, 300));
}
console.log(app.logs.filter((l) => /"level":(50|40)/.test(l)).join('').slice(0, 3000));
await app.close();

// RECOGNITION_BUILTIN_PROFILES=false: the built-in profiles read nothing (Claude Code events are stored as the generic
// reading makes them), an organization's own profiles still do.
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { describe, expect, it } from 'vitest';
import { bearer, createOrg, http } from '../helpers/app.js';
import { backendNames } from '../helpers/backends.js';
import { suiteApp } from '../helpers/suite-app.js';
import { ingestedEvents } from '../ingest/ingest-kit.js';
import { exportLogs, OTLP_BASE } from '../ingest/otlp/otlp-kit.js';
import { replayAgentLogs } from './agent-emitters.js';

describe.each(backendNames)('built-in profiles off (%s backend)', (backendName) => {
  const { app } = suiteApp(backendName, { RECOGNITION_BUILTIN_PROFILES: 'false' });

  it('lists none and reads nothing with them; the agent events are stored by the generic reading', async () => {
    const org = await createOrg(app.url);
    const listed = await http(`${app.url}/api/v1/recognition/profiles`, { headers: bearer(org.key) });
    expect(listed.body.builtin).toEqual([]);
    const exporter = new OTLPLogExporter({ url: `${app.url}${OTLP_BASE}/v1/logs`, headers: bearer(org.key) });
    const records = await replayAgentLogs('claude-code-events.otlp.json');
    expect(await exportLogs(exporter, records)).toEqual({ code: 0 });
    await exporter.shutdown();
    const stored = await ingestedEvents(app.url, org.key);
    expect(stored).toHaveLength(records.length);
    expect(stored.filter((e) => e.metadata.recognition !== undefined)).toEqual([]);
  });
});

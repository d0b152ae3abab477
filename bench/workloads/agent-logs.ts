// Agent telemetry as OTLP/JSON log exports (Claude Code and Codex tool results beside gateway JSON lines), for the recognition scenarios.

export const str = (k: string, v: string) => ({ key: k, value: { stringValue: v } });

/** `count` log records, a third each Claude Code tool results, Codex tool results and gateway JSON lines; ids from `tag`. */
export function agentLogsExport(count: number, tag: string): Buffer {
  const records = Array.from({ length: count }, (_, i) => {
    const t = String(BigInt(Date.parse('2026-01-01T10:00:00Z') + i) * 1_000_000n);
    if (i % 3 === 0)
      return { timeUnixNano: t, body: { stringValue: 'claude_code.tool_result' }, attributes: [str('event.name', 'tool_result'), str('session.id', `s-${i % 50}`), str('tool_name', 'Read'), str('success', 'true'), str('duration_ms', '12'), str('tool_use_id', `toolu_${tag}_${i}`), str('event.timestamp', '2026-01-01T10:00:00.000Z')] };
    if (i % 3 === 1)
      return { timeUnixNano: t, attributes: [str('event.name', 'codex.tool_result'), str('tool_name', 'shell'), str('call_id', `call_${tag}_${i}`), str('duration_ms', '47'), str('success', 'true'), str('output', 'ok'), str('conversation.id', `c-${i % 50}`)] };
    return { timeUnixNano: t, body: { stringValue: JSON.stringify({ tool_name: 'search', server_name: 'docs', status: 'success', duration_ms: 9, session_id: `g-${i % 50}` }) }, attributes: [] };
  });
  return Buffer.from(JSON.stringify({ resourceLogs: [{ resource: { attributes: [str('service.name', 'agents')] }, scopeLogs: [{ scope: { name: 'com.anthropic.claude_code.events' }, logRecords: records }] }] }));
}

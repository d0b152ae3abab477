// Raw tool-call events for the stream benchmarks: the id of each event names its batch, so receipts map back to sends.
const SERVERS = ['mcp-github', 'mcp-jira', 'mcp-slack', 'mcp-postgres', 'mcp-filesystem', 'mcp-docs'];
const TOOLS = ['create_issue', 'search_issues', 'post_message', 'query', 'read_file', 'search_docs', 'list_pull_requests', 'write_file'];
const ACTIONS = ['allow', 'allow', 'allow', 'allow', 'allow', 'allow', 'deny', 'flag', 'redact', 'allow'];
const SESSIONS = Array.from({ length: 8 }, (_, i) => `sess_${(0x5eed0000 + i * 7919).toString(16)}a7c3e1`);

export interface RawToolCall {
  id: string;
  serverId: string;
  sessionId: string;
  toolName: string;
  action: string;
  latencyMs: number;
  timestamp: string;
}

/** Batch `batch` of `size` events; the last event's id is `<tag>-<batch>-<size - 1>`. */
export function toolCallBatch(tag: string, batch: number, size: number): RawToolCall[] {
  const now = new Date().toISOString();
  const out: RawToolCall[] = new Array(size);
  for (let i = 0; i < size; i++) {
    const k = batch * size + i;
    out[i] = {
      id: `${tag}-${batch}-${i}`,
      serverId: SERVERS[k % SERVERS.length],
      sessionId: SESSIONS[k % SESSIONS.length],
      toolName: TOOLS[(k * 7) % TOOLS.length],
      action: ACTIONS[k % ACTIONS.length],
      latencyMs: 5 + ((k * 37) % 400),
      timestamp: now,
    };
  }
  return out;
}

/** A LIKE pattern of the ids of batches' last events (raw ingest keeps an event's id in metadata.id), to find their seqs. */
export function lastIdPattern(tag: string, size: number): string {
  return `${tag}-%-${size - 1}`;
}

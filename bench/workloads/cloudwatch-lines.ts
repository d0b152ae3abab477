// Realistic Lambda log lines for the ingest benchmark: START/END/REPORT around JSON and logfmt tool-call lines, real-looking ids.
const SERVERS: Record<string, string[]> = {
  'mcp-github': ['create_issue', 'list_pull_requests', 'get_file_contents', 'search_code', 'create_pull_request'],
  'mcp-jira': ['create_ticket', 'search_issues', 'transition_issue', 'add_comment'],
  'mcp-slack': ['post_message', 'list_channels', 'search_messages'],
  'mcp-postgres': ['query', 'list_tables', 'describe_table'],
  'mcp-filesystem': ['read_file', 'write_file', 'list_directory', 'search_files'],
  'mcp-browser': ['navigate', 'screenshot', 'click', 'fill_form'],
  'mcp-shell': ['run_command'],
  'mcp-docs': ['search_docs', 'fetch_page'],
};
const SERVER_IDS = Object.keys(SERVERS);
const ACTIONS = ['allowed', 'allowed', 'allowed', 'allowed', 'allowed', 'allowed', 'blocked', 'flagged', 'redacted', 'approved'];

/** mulberry32: a small seeded PRNG, so every run sends the same kind of traffic. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface LogEvent {
  message: string;
  timestamp: string;
}

export interface CloudWatchBody {
  logGroup: string;
  logStream: string;
  events: LogEvent[];
}

/** Endless CloudWatch spec bodies of `size` log events, as one Lambda function's log stream would produce them. */
export function createLogGenerator(seed: number, size = 500) {
  const rand = prng(seed);
  const hex = (n: number) => {
    let s = '';
    for (let i = 0; i < n; i++) s += ((rand() * 16) | 0).toString(16);
    return s;
  };
  const pick = <T>(xs: readonly T[]): T => xs[(rand() * xs.length) | 0];
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[(rand() * 4) | 0]}${hex(3)}-${hex(12)}`;
  const logGroup = `/aws/lambda/mcp-gateway-${pick(['prod', 'prod-eu', 'prod-us'])}`;
  const logStream = `${new Date().toISOString().slice(0, 10).replace(/-/g, '/')}/[$LATEST]${hex(32)}`;

  // Agent sessions live for a few dozen calls, like a conversation.
  const sessions = Array.from({ length: 12 }, () => ({ id: `sess_${hex(16)}`, left: 20 + ((rand() * 40) | 0) }));
  const session = () => {
    const i = (rand() * sessions.length) | 0;
    if (--sessions[i].left <= 0) sessions[i] = { id: `sess_${hex(16)}`, left: 20 + ((rand() * 40) | 0) };
    return sessions[i].id;
  };

  function toolLine(t: number, requestId: string, xray: string, sessionId: string): string {
    const server = pick(SERVER_IDS);
    const tool = pick(SERVERS[server]);
    const action = pick(ACTIONS);
    const latency = 2 + ((rand() * rand() * 900) | 0);
    const iso = new Date(t).toISOString();
    switch ((rand() * 4) | 0) {
      case 0: // Node.js runtime prefix + Powertools-style JSON
        return `${iso}\t${requestId}\tINFO\t${JSON.stringify({ level: 'INFO', message: 'tool call completed', service: 'mcp-gateway', cold_start: false, toolName: tool, action, serverId: server, sessionId, latencyMs: latency, xray_trace_id: xray, function_request_id: requestId })}\n`;
      case 1: // Lambda JSON log format: the runtime writes the whole line as JSON
        return JSON.stringify({
          timestamp: iso,
          level: 'INFO',
          requestId,
          message: { event: 'tool_call', tool: { name: tool, args_size: (rand() * 4096) | 0 }, verdict: action, mcp_server: server, session_id: sessionId, duration_ms: latency + 0.37, traceparent: `00-${hex(32)}-${hex(16)}-01` },
        });
      case 2: // Node.js runtime prefix + logfmt
        return `${iso}\t${requestId}\tINFO\tlevel=info msg="tool call" tool=${tool} action=${action} server=${server} session=${sessionId} latency_ms=${latency} trace_id=${hex(16)}\n`;
      default: // Python runtime prefix + logfmt
        return `[INFO]\t${iso}\t${requestId}\tts=${iso} level=info event=tool_call tool_name=${tool} outcome=${action} server_id=${server} session_id=${sessionId} duration_ms=${latency}\n`;
    }
  }

  /** One Lambda invocation: START, 3 to 8 tool-call lines, END, REPORT. */
  function invocation(t0: number): string[] {
    const requestId = uuid();
    const xray = `1-${Math.floor(t0 / 1000).toString(16)}-${hex(24)}`;
    const sessionId = session();
    const lines = [`START RequestId: ${requestId} Version: $LATEST\n`];
    const calls = 3 + ((rand() * 6) | 0);
    for (let i = 0; i < calls; i++) lines.push(toolLine(t0 + 1 + i * 7, requestId, xray, sessionId));
    const dur = (calls * 7 + rand() * 40).toFixed(2);
    lines.push(`END RequestId: ${requestId}\n`);
    lines.push(
      `REPORT RequestId: ${requestId}\tDuration: ${dur} ms\tBilled Duration: ${Math.ceil(Number(dur))} ms\tMemory Size: 512 MB\tMax Memory Used: ${80 + ((rand() * 60) | 0)} MB\t\nXRAY TraceId: ${xray}\tSegmentId: ${hex(16)}\tSampled: true\t\n`,
    );
    return lines;
  }

  let clock = Date.now();
  return {
    next(): CloudWatchBody {
      const events: LogEvent[] = [];
      clock = Math.max(clock, Date.now());
      while (events.length < size) {
        for (const message of invocation(clock)) {
          if (events.length === size) break;
          events.push({ message, timestamp: new Date(clock).toISOString() });
        }
        clock += 1;
      }
      return { logGroup, logStream, events };
    },
  };
}

// Built-in recognition profiles, kept as data: one per agent or framework, each with the public source it follows and
// the fixture it is tested against (test/fixtures/agents/). How each emitter's records pair into exactly one tool call is
// written beside each profile.
import type { Profile } from './profile.js';

const str = (key: string) => `('${key}' in attributes ? attributes['${key}'] : null)`;

/**
 * Claude Code events. A `claude_code.tool_result` is the call that ran (never emitted for a rejected call); a
 * `claude_code.tool_decision` with `decision=reject` is a call that did not run (deny); an accepted decision is followed by
 * its tool_result, so it is kept as a log row, not a second tool call. MCP tools are reported as `tool_name=mcp_tool`
 * with the server and tool in the `tool_parameters` JSON (OTEL_LOG_TOOL_DETAILS=1).
 */
const claudeCode: Profile = {
  id: 'claude-code',
  version: 1,
  description: 'Claude Code OpenTelemetry events claude_code.tool_result and claude_code.tool_decision',
  source: 'https://code.claude.com/docs/en/monitoring-usage',
  fixture: 'agents/claude-code-events.otlp.json',
  when:
    "kind == 'log' && 'tool_name' in attributes && (body in ['claude_code.tool_result', 'claude_code.tool_decision'] || " +
    "(scope == 'com.anthropic.claude_code.events' && 'event.name' in attributes && attributes['event.name'] in ['tool_result', 'tool_decision']))",
  fields: {
    toolCall: "body == 'claude_code.tool_result' || attributes['event.name'] == 'tool_result' || ('decision' in attributes && attributes.decision == 'reject')",
    tool: "'tool_parameters' in attributes && 'mcp_tool_name' in jsonParse(attributes.tool_parameters) ? jsonParse(attributes.tool_parameters).mcp_tool_name : attributes.tool_name",
    server: "'tool_parameters' in attributes && 'mcp_server_name' in jsonParse(attributes.tool_parameters) ? jsonParse(attributes.tool_parameters).mcp_server_name : null",
    action: "'decision' in attributes ? attributes.decision : 'allow'",
    actionWord: "'decision' in attributes ? attributes.decision : 'success=' + string(attributes.success)",
    session: str('session.id'),
    latencyMs: str('duration_ms'),
    time: str('event.timestamp'),
    traceId: "log.traceId != '' ? log.traceId : null",
    callId: str('tool_use_id'),
  },
};

/**
 * OpenAI Codex CLI events. Codex wraps every tool handler, approval included, in one `codex.tool_result`, so approved,
 * denied and failed calls each produce exactly one; a denied call's output is Codex's rejection message. The
 * `codex.tool_decision` before it (same call_id) is kept as a log row. MCP tools are named `<server>__<tool>`.
 */
const codex: Profile = {
  id: 'codex-cli',
  version: 1,
  description: 'OpenAI Codex CLI OpenTelemetry log events codex.tool_result and codex.tool_decision',
  source: 'https://github.com/openai/codex (codex-rs/otel/src/events/session_telemetry.rs)',
  fixture: 'agents/codex-events.otlp.json',
  when: "kind == 'log' && 'event.name' in attributes && attributes['event.name'] in ['codex.tool_result', 'codex.tool_decision'] && 'tool_name' in attributes",
  fields: {
    toolCall: "attributes['event.name'] == 'codex.tool_result'",
    tool:
      "'mcp_server' in attributes && attributes.mcp_server != '' && attributes.tool_name.startsWith(attributes.mcp_server + '__') " +
      '? attributes.tool_name.substring(size(attributes.mcp_server) + 2) : attributes.tool_name',
    server: "'mcp_server' in attributes && attributes.mcp_server != '' ? attributes.mcp_server : null",
    action:
      "attributes['event.name'] == 'codex.tool_decision' ? attributes.decision : " +
      "('output' in attributes && (attributes.output.contains('rejected by user') || attributes.output.contains('rejected due to unacceptable risk')) ? 'deny' : 'allow')",
    actionWord:
      "attributes['event.name'] == 'codex.tool_decision' ? attributes.decision : " +
      "('output' in attributes && (attributes.output.contains('rejected by user') || attributes.output.contains('rejected due to unacceptable risk')) ? attributes.output : 'success=' + string(attributes.success))",
    session: str('conversation.id'),
    latencyMs: str('duration_ms'),
    time: str('event.timestamp'),
    traceId: "log.traceId != '' ? log.traceId : null",
    callId: str('call_id'),
  },
};

/**
 * Gemini CLI `gemini_cli.tool_call`: one record per completed tool call, cancelled ones included. `decision=reject` (the
 * user cancelled) is deny; accept, auto_accept, modify or no decision is a call that ran.
 */
const geminiCli: Profile = {
  id: 'gemini-cli',
  version: 1,
  description: 'Gemini CLI OpenTelemetry log event gemini_cli.tool_call',
  source: 'https://github.com/google-gemini/gemini-cli (docs/cli/telemetry.md, packages/core/src/telemetry/types.ts)',
  fixture: 'agents/gemini-cli-events.otlp.json',
  when: "kind == 'log' && 'event.name' in attributes && attributes['event.name'] == 'gemini_cli.tool_call' && 'function_name' in attributes",
  fields: {
    tool: 'attributes.function_name',
    server: str('mcp_server_name'),
    action: "'decision' in attributes && attributes.decision == 'reject' ? 'deny' : 'allow'",
    actionWord: "'decision' in attributes ? attributes.decision : 'success=' + string(attributes.success)",
    session: str('session.id'),
    latencyMs: str('duration_ms'),
    time: str('event.timestamp'),
    traceId: "log.traceId != '' ? log.traceId : null",
  },
};

/**
 * Vercel AI SDK `ai.toolCall` spans: one per executed tool (a tool the application did not approve never runs and has no
 * span); the generateText/streamText spans around it are LLM calls. A tool that threw still ran: allow, status kept.
 */
const aiSdk: Profile = {
  id: 'vercel-ai-sdk',
  version: 1,
  description: 'Vercel AI SDK telemetry ai.toolCall spans',
  source: 'https://ai-sdk.dev/docs/ai-sdk-core/telemetry#tool-call-spans',
  fixture: 'agents/ai-sdk-spans.otlp.json',
  when: "kind == 'span' && 'ai.toolCall.name' in attributes && (name == 'ai.toolCall' || ('ai.operationId' in attributes && attributes['ai.operationId'] == 'ai.toolCall'))",
  fields: {
    tool: "attributes['ai.toolCall.name']",
    action: "'allow'",
    actionWord: "'status=' + span.status",
    session:
      "'ai.telemetry.metadata.sessionId' in attributes ? attributes['ai.telemetry.metadata.sessionId'] : " +
      "('ai.telemetry.metadata.session_id' in attributes ? attributes['ai.telemetry.metadata.session_id'] : null)",
    latencyMs: 'span.durationMs',
    time: 'span.startMs',
    traceId: "span.traceId != '' ? span.traceId : null",
    callId: str('ai.toolCall.id'),
  },
};

/**
 * OpenInference TOOL spans (LangChain.js and other frameworks instrumented by OpenInference): one per tool run; chain,
 * LLM and retriever spans are not tool calls. A tool that threw still ran: allow, status kept.
 */
const openInference: Profile = {
  id: 'openinference-tool',
  version: 1,
  description: 'OpenInference spans with openinference.span.kind=TOOL',
  source: 'https://github.com/Arize-ai/openinference (spec/semantic_conventions.md; @arizeai/openinference-instrumentation-langchain)',
  fixture: 'agents/openinference-langchain-spans.otlp.json',
  when: "kind == 'span' && 'openinference.span.kind' in attributes && attributes['openinference.span.kind'] == 'TOOL'",
  fields: {
    tool: "'tool.name' in attributes ? attributes['tool.name'] : name",
    action: "'allow'",
    actionWord: "'status=' + span.status",
    session: str('session.id'),
    latencyMs: 'span.durationMs',
    time: 'span.startMs',
    traceId: "span.traceId != '' ? span.traceId : null",
    callId: str('tool_call.id'),
  },
};

/** The built-in profiles, in the order they are tried (after an organization's own). */
export const BUILTIN_PROFILES: readonly Profile[] = [claudeCode, codex, geminiCli, aiSdk, openInference];

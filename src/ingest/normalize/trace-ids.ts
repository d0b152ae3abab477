// Recognizes trace id notations: W3C traceparent, AWS X-Ray ids, and trace_id=-style hints in free text.
import { scanWindow } from './strings.js';

const TRACEPARENT = /^\s*([0-9a-fA-F]{2})-([0-9a-fA-F]{32})-([0-9a-fA-F]{16})-([0-9a-fA-F]{2})(?:-[^\s]*)?\s*$/;
const XRAY_ID = /^1-[0-9a-fA-F]{8}-[0-9a-fA-F]{24}$/;
const XRAY_ROOT = /Root=(1-[0-9a-fA-F]{8}-[0-9a-fA-F]{24})(?![0-9a-fA-F])/;
const XRAY_REPORT = /XRAY TraceId:\s*(1-[0-9a-fA-F]{8}-[0-9a-fA-F]{24})(?![0-9a-fA-F])/;
const TRACEPARENT_IN_TEXT = /(?<![0-9a-fA-F-])([0-9a-fA-F]{2}-[0-9a-fA-F]{32}-[0-9a-fA-F]{16}-[0-9a-fA-F]{2})(?![0-9a-fA-F-])/;
const EXPLICIT_IN_TEXT = /(?<![\w.-])(?:dd\.trace_id|trace_id|traceId|trace\.id)"?\s*[=:]\s*"?([A-Za-z0-9][A-Za-z0-9-]{0,199})/;

/** The 32-hex trace id of a W3C `traceparent` value (`00-<trace id>-<parent id>-<flags>`), lowercased; null if invalid. */
export function traceIdFromTraceparent(value: string): string | null {
  if (value.length > 512) return null;
  const m = TRACEPARENT.exec(value);
  if (!m) return null;
  const version = m[1].toLowerCase();
  const traceId = m[2].toLowerCase();
  if (version === 'ff' || /^0+$/.test(traceId)) return null;
  return traceId;
}

/** An X-Ray trace id (`1-xxxxxxxx-xxxxxxxxxxxxxxxxxxxxxxxx`) from a bare id or an `X-Amzn-Trace-Id` header value (`Root=...;Parent=...`). */
export function xrayTraceId(value: string): string | null {
  if (value.length > 1024) return null;
  const trimmed = value.trim();
  if (XRAY_ID.test(trimmed)) return trimmed;
  const m = XRAY_ROOT.exec(trimmed);
  return m ? m[1] : null;
}

export interface TextTraceIds {
  /** A `trace_id=`, `traceId:`, `dd.trace_id=` value. */
  explicit: string | null;
  /** The trace id part of a W3C traceparent found in the text. */
  traceparent: string | null;
  /** An X-Ray id from `Root=1-...` or `XRAY TraceId: 1-...`. */
  xray: string | null;
}

/** Trace ids mentioned anywhere in the first 64 KiB of `text`. */
export function scanTraceIds(text: string): TextTraceIds {
  const window = scanWindow(text);
  const explicit = EXPLICIT_IN_TEXT.exec(window);
  const parent = TRACEPARENT_IN_TEXT.exec(window);
  const xray = XRAY_ROOT.exec(window) ?? XRAY_REPORT.exec(window);
  return {
    explicit: explicit ? explicit[1] : null,
    traceparent: parent ? traceIdFromTraceparent(parent[1]) : null,
    xray: xray ? xray[1] : null,
  };
}

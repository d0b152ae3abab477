// The one rule for entries that carry nothing, on every route: they store nothing and are counted (outcome `empty`).

/** What an entry carries, as its source reads it: its text (message, log body, record data), fields or attributes, and name. */
export interface EntryContent {
  text?: string | null;
  fields?: Readonly<Record<string, unknown>> | null;
  name?: string | null;
}

/** True for text that is absent or only whitespace. */
export function isBlank(text: string | null | undefined): boolean {
  return text === null || text === undefined || text.trim() === '';
}

/**
 * True when an entry carries nothing to audit: no text (or only whitespace), no fields or attributes, no name. Such an
 * entry (an empty Firehose record, a blank CloudWatch line, an OTLP log record or span with no body, attributes or
 * name) is not stored and is counted as `empty` (SourceEvents.empty); its neighbours keep their positions.
 */
export function isEmptyEntry(entry: EntryContent): boolean {
  if (!isBlank(entry.text) || !isBlank(entry.name)) return false;
  const fields = entry.fields;
  if (!fields) return true;
  for (const key in fields) if (Object.prototype.hasOwnProperty.call(fields, key)) return false;
  return true;
}

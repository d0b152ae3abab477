// Public API of log normalization: turns log messages and Datadog events into tool-call fields (pure functions, no I/O).
export { ACTION_VOCABULARY, mapAction, type Action, type MappedAction } from './actions.js';
export { normalizeDatadog, parseDatadogTags, stripDatadogMarkdown, type DatadogInput, type NormalizedDatadog } from './datadog.js';
export { parseLogfmt } from './logfmt.js';
export { normalizeMessage } from './message.js';
export { parseTimestamp } from './timestamps.js';
export type { Normalized, NormalizedFormat } from './types.js';

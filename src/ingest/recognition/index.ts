// Public API of recognition: profiles (CEL), record views, the built-in profiles and the word-based heuristics.
export { BUILTIN_PROFILES } from './builtin-profiles.js';
export { compileProfile, profileEnv, ProfileCompileError, type CompiledProfile, type CompiledExpression, type EvalOutcome } from './compile-profile.js';
export { DEFAULT_EXPRESSION_LIMITS, type ExpressionLimits } from './expression-limits.js';
export { emptyFindings, findInRecord, findInText, type Findings } from './heuristic-fields.js';
export { keyRole, keyWords, leadingTimestamp, durationInText, parseAnyTimestamp, parseDurationMs, flagOutcome, type KeyRole } from './key-words.js';
export { logView, spanView } from './otlp-views.js';
export { PROFILE_FIELDS, profileSchema, type Profile, type ProfileField } from './profile.js';
export { boundedMap, boundedValue, emptyView, messageView, VIEW_LIMITS, type RecordKind, type RecordView } from './record-view.js';
export { recognize, type ProfileFailure, type Recognized, type RecognitionOutcome } from './recognize.js';

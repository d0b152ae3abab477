// Every CEL function a profile can call, metered against an EvaluationBudget: the characters (or bytes) of the strings
// it reads and makes and the list and map entries it makes are charged, so what a profile builds at run time (replace,
// join, split, quote, `+`...) is bounded in time and memory, not only its expression's shape. `replace` and `join` are
// replaced by linear versions that charge their result's size before building it.
import { celError, celMethod, CelScalar, isCelError, isCelList, isCelMap, listType, type CelEnv, type CelFunc } from '@bufbuild/cel';
import { EvaluationBudgetSpent, type EvaluationBudget } from './evaluation-budget.js';

/** What one list or map entry made by a function is charged, in characters: an entry is iterated, not only stored. */
export const ENTRY_UNITS = 64;

/**
 * What `text.matches(pattern)` is charged before it runs: RE2 is linear in the text but its time per character grows
 * with the compiled program, which counted repetitions expand (`.{1000}` is 7 characters and 1,000 instructions).
 * The program is bounded by the pattern's length times one plus the sum of its repetition counts (RE2 refuses nested
 * ones whose product passes 1000); measured, 64 KB against 3,000 instructions took 0.45 s, against a short pattern 8 ms.
 */
export function matchesUnits(text: string, pattern: string): number {
  let repeats = 0;
  for (const m of pattern.matchAll(/\{(\d{1,4})(?:,(\d{0,4}))?\}/g)) repeats += Math.max(Number(m[1]), Number(m[2] || 0));
  const program = pattern.length * (1 + repeats);
  return text.length * (3 + Math.ceil(program / 16)) + pattern.length;
}

function textSize(v: unknown): number {
  if (typeof v === 'string' || v instanceof Uint8Array) return v.length;
  return 0;
}

function entries(v: unknown): number {
  if (isCelList(v) || isCelMap(v)) return v.size;
  return 0;
}

/** Go's strings.Replace: the first `n` (all when negative) non-overlapping `from` replaced, in one pass. */
function replaceLinear(budget: EvaluationBudget, text: string, from: string, to: string, n: number): string {
  if (n === 0) return text;
  const parts: string[] = [];
  if (from === '') {
    // An empty `from` matches before each character and at the end.
    const chars = Array.from(text);
    const count = n < 0 ? chars.length + 1 : Math.min(n, chars.length + 1);
    budget.charge(count * to.length);
    for (let i = 0; i < chars.length; i++) parts.push(i < count ? to + chars[i] : chars[i]);
    if (count > chars.length) parts.push(to);
    return parts.join('');
  }
  let at = 0;
  let done = 0;
  for (let i = text.indexOf(from); i !== -1 && (n < 0 || done < n); i = text.indexOf(from, at)) {
    budget.charge(to.length);
    parts.push(text.slice(at, i), to);
    at = i + from.length;
    done++;
  }
  parts.push(text.slice(at));
  return parts.join('');
}

function joinLinear(budget: EvaluationBudget, items: readonly unknown[], sep: string): string {
  budget.charge(Math.max(0, items.length - 1) * sep.length);
  for (const item of items) if (typeof item !== 'string') throw new Error('join: list contains non-string value');
  return items.join(sep);
}

/** The linear `replace` and `join` overloads of the strings extension, charging their result before making it. */
export function linearStringFunctions(budget: EvaluationBudget): CelFunc[] {
  const { STRING, INT } = CelScalar;
  const LIST_STRING = listType(STRING);
  return [
    celMethod('replace', STRING, [STRING, STRING], STRING, function (from, to) {
      return replaceLinear(budget, this, from, to, -1);
    }),
    celMethod('replace', STRING, [STRING, STRING, INT], STRING, function (from, to, n) {
      return replaceLinear(budget, this, from, to, Number(n));
    }),
    celMethod('join', LIST_STRING, [], STRING, function () {
      return joinLinear(budget, [...this], '');
    }),
    celMethod('join', LIST_STRING, [STRING], STRING, function (sep) {
      return joinLinear(budget, [...this], sep);
    }),
  ];
}

/**
 * `fn` charging the text it read and the text and entries it made, once it ran (an overload that does not apply is not
 * charged). What one call makes before it is charged is linear in what it read, which was charged when it was made.
 */
function metered(fn: CelFunc, budget: EvaluationBudget): CelFunc {
  const wrapped = Object.create(fn) as CelFunc & { call: CelFunc['call'] };
  wrapped.call = (id, target, args) => {
    try {
      if (budget.spent) return celError(new EvaluationBudgetSpent(budget.budgetLimit), id);
      if (fn.name === 'matches') {
        // Charged whole before it runs (the time is in the call); the generic charge below is not added.
        const [text, pattern] = target === undefined ? args : [target, ...args];
        if (typeof text === 'string' && typeof pattern === 'string') {
          budget.charge(matchesUnits(text, pattern));
          return fn.call(id, target, args);
        }
      }
      const out = fn.call(id, target, args);
      if (out === undefined || isCelError(out)) return out;
      let read = textSize(target);
      let had = entries(target);
      for (const a of args) {
        read += textSize(a);
        had += entries(a);
      }
      const made = textSize(out) + Math.max(0, entries(out) - had) * ENTRY_UNITS;
      if (read + made) budget.charge(read + made);
      return out;
    } catch (err) {
      return celError(err, id);
    }
  };
  return wrapped;
}

/** Every function of `env` (the standard library and the extensions given to it) metered against `budget`. */
export function meteredFunctions(env: CelEnv, budget: EvaluationBudget): CelFunc[] {
  return [...env.funcs].map((fn) => metered(fn, budget));
}


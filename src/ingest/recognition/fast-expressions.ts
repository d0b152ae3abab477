// A fast path for the simplest CEL shapes profiles are made of (`attributes['k']`, `'k' in attributes ? … : null`,
// `span.durationMs`, `'status=' + span.status`, string equality, `startsWith`/`endsWith`/`contains`, `&&`, `||`, `!`,
// `? :`): closures over the record view, for values that are strings, booleans or null. Anything else (numbers compared or added, macros, functions)
// answers FALLBACK and is evaluated by @bufbuild/cel, so the result is always CEL's.
import type { parse } from '@bufbuild/cel';
import type { RecordView } from './record-view.js';

type Expr = ReturnType<typeof parse>['expr'];

/** Not a shape the fast path is sure of on this record: evaluate with @bufbuild/cel. */
export const FALLBACK: unique symbol = Symbol('fallback');

/** An evaluation error (what CEL would answer as an error value), with its message. */
export class FastError {
  constructor(readonly message: string) {}
}

type Out = unknown;
export type FastExpression = (view: RecordView) => Out;

const PLAIN_VARS = new Set(['source', 'kind', 'logGroup', 'name', 'scope', 'body']);

/** A part of an expression the fast path does not handle: reaching it hands the record to CEL. */
const unsupported: FastExpression = () => FALLBACK;
const MAP_VARS = new Set(['attributes', 'span', 'log']);

const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
const bad = (v: unknown) => v === FALLBACK || v instanceof FastError;

function mapOf(view: RecordView, name: string): Record<string, unknown> {
  return name === 'attributes' ? view.attributes : name === 'span' ? view.span : view.log;
}

function member(map: string, key: string): FastExpression {
  return (view) => {
    const m = mapOf(view, map);
    return Object.prototype.hasOwnProperty.call(m, key) ? m[key] : new FastError(`no such key: ${key}`);
  };
}

function constant(e: Expr): FastExpression {
  if (e.exprKind.case !== 'constExpr') return unsupported;
  const c = e.exprKind.value.constantKind;
  if (c.case === 'stringValue' || c.case === 'boolValue') {
    const v = c.value;
    return () => v;
  }
  if (c.case === 'nullValue') return () => null;
  return unsupported;
}

function strings(e: Expr): Set<string> | null {
  if (e.exprKind.case !== 'listExpr') return null;
  const out = new Set<string>();
  for (const el of e.exprKind.value.elements) {
    if (el.exprKind.case !== 'constExpr' || el.exprKind.value.constantKind.case !== 'stringValue') return null;
    out.add(el.exprKind.value.constantKind.value);
  }
  return out;
}

const STRING_METHODS: Record<string, (s: string, arg: string) => boolean> = {
  startsWith: (s, arg) => s.startsWith(arg),
  endsWith: (s, arg) => s.endsWith(arg),
  contains: (s, arg) => s.includes(arg),
};

/** `s.startsWith(x)`, `s.endsWith(x)`, `s.contains(x)` on strings. */
function method(fn: string, target: Expr, args: Expr[]): FastExpression {
  const op = Object.prototype.hasOwnProperty.call(STRING_METHODS, fn) ? STRING_METHODS[fn] : null;
  if (!op || args.length !== 1) return unsupported;
  const t = compileNode(target);
  const a = compileNode(args[0]);
  return (view) => {
    const x = t(view);
    if (bad(x)) return x;
    const y = a(view);
    if (bad(y)) return y;
    return typeof x === 'string' && typeof y === 'string' ? op(x, y) : FALLBACK;
  };
}

function call(fn: string, args: Expr[]): FastExpression {
  if (fn === '_[_]' && args.length === 2) {
    const [target, key] = args;
    if (target.exprKind.case === 'identExpr' && MAP_VARS.has(target.exprKind.value.name) && key.exprKind.case === 'constExpr' && key.exprKind.value.constantKind.case === 'stringValue') {
      return member(target.exprKind.value.name, key.exprKind.value.constantKind.value);
    }
    return unsupported;
  }
  if (fn === '@in' && args.length === 2) {
    const [item, container] = args;
    if (container.exprKind.case === 'identExpr' && MAP_VARS.has(container.exprKind.value.name)) {
      if (item.exprKind.case !== 'constExpr' || item.exprKind.value.constantKind.case !== 'stringValue') return unsupported;
      const key = item.exprKind.value.constantKind.value;
      const map = container.exprKind.value.name;
      return (view) => Object.prototype.hasOwnProperty.call(mapOf(view, map), key);
    }
    const set = strings(container);
    if (!set) return unsupported;
    const x = compileNode(item);
    return (view) => {
      const v = x(view);
      if (bad(v)) return v;
      // null equals no string (CEL's heterogeneous equality).
      return typeof v === 'string' ? set.has(v) : v === null ? false : FALLBACK;
    };
  }
  const compiled = args.map(compileNode);
  const [a, b, c] = compiled;
  switch (fn) {
    case '_==_':
    case '_!=_': {
      const negate = fn === '_!=_';
      return (view) => {
        const x = a(view);
        if (bad(x)) return x;
        const y = b(view);
        if (bad(y)) return y;
        const same = (typeof x === 'string' && typeof y === 'string') || (isBool(x) && isBool(y)) || (x === null && y === null);
        // null against a string: never equal (CEL's heterogeneous equality).
        const nullAndString = (x === null && typeof y === 'string') || (y === null && typeof x === 'string');
        if (nullAndString) return negate;
        if (!same) return FALLBACK;
        return negate ? x !== y : x === y;
      };
    }
    case '_+_':
      return (view) => {
        const x = a(view);
        if (bad(x)) return x;
        const y = b(view);
        if (bad(y)) return y;
        return typeof x === 'string' && typeof y === 'string' ? x + y : FALLBACK;
      };
    case 'string':
      if (compiled.length !== 1) return unsupported;
      return (view) => {
        const x = a(view);
        if (bad(x)) return x;
        return typeof x === 'string' ? x : isBool(x) ? String(x) : FALLBACK;
      };
    case '!_':
      return (view) => {
        const x = a(view);
        if (bad(x)) return x;
        return isBool(x) ? !x : FALLBACK;
      };
    case '_?_:_':
      return (view) => {
        const cond = a(view);
        if (bad(cond)) return cond;
        if (!isBool(cond)) return FALLBACK;
        return cond ? b(view) : c(view);
      };
    case '_&&_':
    case '_||_': {
      // CEL's commutative logic: a deciding value wins over an error on the other side.
      const decides = fn === '_||_';
      return (view) => {
        const x = a(view);
        if (x === FALLBACK || (!isBool(x) && !(x instanceof FastError))) return FALLBACK;
        if (x === decides) return decides;
        const y = b(view);
        if (y === FALLBACK || (!isBool(y) && !(y instanceof FastError))) return FALLBACK;
        if (y === decides) return decides;
        if (x instanceof FastError) return x;
        if (y instanceof FastError) return y;
        return !decides;
      };
    }
    default:
      return unsupported;
  }
}

function compileNode(e: Expr): FastExpression {
  switch (e.exprKind.case) {
    case 'constExpr':
      return constant(e);
    case 'identExpr': {
      const name = e.exprKind.value.name;
      if (PLAIN_VARS.has(name)) return (view) => view[name as 'source'];
      return unsupported;
    }
    case 'selectExpr': {
      const { operand, field, testOnly } = e.exprKind.value;
      if (testOnly || operand?.exprKind.case !== 'identExpr' || !MAP_VARS.has(operand.exprKind.value.name)) return unsupported;
      return member(operand.exprKind.value.name, field);
    }
    case 'callExpr': {
      const { target, function: fn, args } = e.exprKind.value;
      return target ? method(fn, target, args) : call(fn, args);
    }
    default:
      return unsupported;
  }
}

/**
 * The fast closure of an expression, or null when the expression itself is not a handled shape. A part that is not
 * handled answers FALLBACK only when it is reached (`false && jsonParse(…)` is still decided fast).
 */
export function compileFast(e: Expr): FastExpression | null {
  const fast = compileNode(e);
  return fast === unsupported ? null : fast;
}

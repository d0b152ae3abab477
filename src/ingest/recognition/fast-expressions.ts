// A fast path for the simplest CEL shapes profiles are made of (`attributes['k']`, `'k' in attributes ? … : null`,
// `span.durationMs`, `'status=' + span.status`, string equality, `&&`, `||`, `!`, `? :`): closures over the record
// view, for values that are strings, booleans or null. Anything else (numbers compared or added, macros, functions)
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

const STRING_VARS = new Set(['source', 'kind', 'logGroup', 'name', 'scope']);
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

function constant(e: Expr): FastExpression | null {
  if (e.exprKind.case !== 'constExpr') return null;
  const c = e.exprKind.value.constantKind;
  if (c.case === 'stringValue' || c.case === 'boolValue') {
    const v = c.value;
    return () => v;
  }
  if (c.case === 'nullValue') return () => null;
  return null;
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

function call(fn: string, args: Expr[]): FastExpression | null {
  if (fn === '_[_]' && args.length === 2) {
    const [target, key] = args;
    if (target.exprKind.case === 'identExpr' && MAP_VARS.has(target.exprKind.value.name) && key.exprKind.case === 'constExpr' && key.exprKind.value.constantKind.case === 'stringValue') {
      return member(target.exprKind.value.name, key.exprKind.value.constantKind.value);
    }
    return null;
  }
  if (fn === '@in' && args.length === 2) {
    const [item, container] = args;
    if (container.exprKind.case === 'identExpr' && MAP_VARS.has(container.exprKind.value.name)) {
      if (item.exprKind.case !== 'constExpr' || item.exprKind.value.constantKind.case !== 'stringValue') return null;
      const key = item.exprKind.value.constantKind.value;
      const map = container.exprKind.value.name;
      return (view) => Object.prototype.hasOwnProperty.call(mapOf(view, map), key);
    }
    const set = strings(container);
    const x = compileFast(item);
    if (!set || !x) return null;
    return (view) => {
      const v = x(view);
      if (bad(v)) return v;
      return typeof v === 'string' ? set.has(v) : FALLBACK;
    };
  }
  const compiled = args.map(compileFast);
  if (compiled.some((c) => c === null)) return null;
  const [a, b, c] = compiled as FastExpression[];
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
      if (compiled.length !== 1) return null;
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
      return null;
  }
}

/** The fast closure of an expression, or null when its shape is not one the fast path handles. */
export function compileFast(e: Expr): FastExpression | null {
  switch (e.exprKind.case) {
    case 'constExpr':
      return constant(e);
    case 'identExpr': {
      const name = e.exprKind.value.name;
      if (STRING_VARS.has(name)) return (view) => view[name as 'source'];
      return null;
    }
    case 'selectExpr': {
      const { operand, field, testOnly } = e.exprKind.value;
      if (testOnly || operand?.exprKind.case !== 'identExpr' || !MAP_VARS.has(operand.exprKind.value.name)) return null;
      return member(operand.exprKind.value.name, field);
    }
    case 'callExpr':
      return e.exprKind.value.target ? null : call(e.exprKind.value.function, e.exprKind.value.args);
    default:
      return null;
  }
}

// Guards of a profile's `when`: its top-level `&&` conditions of the forms `source == 'otlp'`, `kind in ['log']` (on the
// record's plain string variables), `'key' in attributes`, and `attributes['key'] == 'text'` / `attributes.key in [...]`.
// A record failing one makes `when` false whatever the rest says (CEL's `false && x` is false even when x errs), or an
// error (an attribute that is absent), so the profile is skipped without being evaluated, and nothing is counted.
import type { parse } from '@bufbuild/cel';
import type { RecordView } from './record-view.js';

type Expr = ReturnType<typeof parse>['expr'];

const GUARDABLE = ['source', 'kind', 'logGroup', 'name', 'scope'] as const;
type Guardable = (typeof GUARDABLE)[number];

export type Guard =
  | { variable: Guardable; values: ReadonlySet<string> }
  /** `'key' in attributes` (values null), or the attribute is one of the strings. */
  | { attribute: string; values: ReadonlySet<string> | null };

function identOf(e: Expr | undefined): Guardable | null {
  if (e?.exprKind.case !== 'identExpr') return null;
  const name = e.exprKind.value.name;
  return (GUARDABLE as readonly string[]).includes(name) ? (name as Guardable) : null;
}

function stringOf(e: Expr | undefined): string | null {
  if (e?.exprKind.case !== 'constExpr') return null;
  const c = e.exprKind.value.constantKind;
  return c.case === 'stringValue' ? c.value : null;
}

/** `attributes['key']` or `attributes.key`: the key. */
function attributeOf(e: Expr | undefined): string | null {
  if (!e) return null;
  if (e.exprKind.case === 'selectExpr') {
    const { operand, field, testOnly } = e.exprKind.value;
    return !testOnly && operand?.exprKind.case === 'identExpr' && operand.exprKind.value.name === 'attributes' ? field : null;
  }
  if (e.exprKind.case === 'callExpr' && e.exprKind.value.function === '_[_]' && e.exprKind.value.args.length === 2) {
    const [target, key] = e.exprKind.value.args;
    return target.exprKind.case === 'identExpr' && target.exprKind.value.name === 'attributes' ? stringOf(key) : null;
  }
  return null;
}

function stringsOf(e: Expr): ReadonlySet<string> | null {
  if (e.exprKind.case !== 'listExpr') return null;
  const values = e.exprKind.value.elements.map(stringOf);
  return values.every((v) => v !== null) ? new Set(values as string[]) : null;
}

function guardOf(e: Expr): Guard | null {
  if (e.exprKind.case !== 'callExpr') return null;
  const { function: fn, args } = e.exprKind.value;
  if (fn === '_==_' && args.length === 2) {
    const [a, b] = args;
    const variable = identOf(a) ?? identOf(b);
    const value = identOf(a) ? stringOf(b) : stringOf(a);
    if (variable) return value !== null ? { variable, values: new Set([value]) } : null;
    const attribute = attributeOf(a) ?? attributeOf(b);
    const text = attributeOf(a) !== null ? stringOf(b) : stringOf(a);
    return attribute !== null && text !== null ? { attribute, values: new Set([text]) } : null;
  }
  if (fn === '@in' && args.length === 2) {
    const [item, container] = args;
    // `'key' in attributes`
    if (container.exprKind.case === 'identExpr' && container.exprKind.value.name === 'attributes') {
      const key = stringOf(item);
      return key !== null ? { attribute: key, values: null } : null;
    }
    const values = stringsOf(container);
    if (!values) return null;
    const variable = identOf(item);
    if (variable) return { variable, values };
    const attribute = attributeOf(item);
    return attribute !== null ? { attribute, values } : null;
  }
  return null;
}

/** The guards among the top-level `&&` conditions of a `when` expression. */
export function guardsOf(expr: Expr): Guard[] {
  const out: Guard[] = [];
  const stack: Expr[] = [expr];
  while (stack.length) {
    const e = stack.pop()!;
    if (e.exprKind.case === 'callExpr' && e.exprKind.value.function === '_&&_') {
      stack.push(...e.exprKind.value.args);
      continue;
    }
    const g = guardOf(e);
    if (g) out.push(g);
  }
  return out;
}

/** Whether the record passes every guard (else the profile's `when` is false or fails). */
export function passesGuards(guards: readonly Guard[], view: Pick<RecordView, Guardable | 'attributes'>): boolean {
  for (const g of guards) {
    if ('variable' in g) {
      if (!g.values.has(view[g.variable])) return false;
      continue;
    }
    if (!Object.prototype.hasOwnProperty.call(view.attributes, g.attribute)) return false;
    if (g.values) {
      const v = view.attributes[g.attribute];
      if (typeof v !== 'string' || !g.values.has(v)) return false;
    }
  }
  return true;
}

// Bounds on one CEL expression, checked once when a profile is compiled. @bufbuild/cel has no cost budget at run time,
// so time per evaluation is bounded by the expression's shape and the view's size instead (see docs in compileProfile).
import type { parse } from '@bufbuild/cel';

export interface ExpressionLimits {
  /** Longest expression text. */
  maxChars: number;
  /** Most AST nodes (macros count their expanded nodes). */
  maxNodes: number;
  /** Deepest AST nesting. */
  maxDepth: number;
  /** Most comprehensions (`all`, `exists`, `exists_one`, `map`, `filter`); never one inside another. */
  maxComprehensions: number;
}

export const DEFAULT_EXPRESSION_LIMITS: ExpressionLimits = { maxChars: 2000, maxNodes: 300, maxDepth: 40, maxComprehensions: 4 };

export class ExpressionTooComplex extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExpressionTooComplex';
  }
}

type Expr = ReturnType<typeof parse>['expr'];

/** The shape of an expression that passed the limits. */
export interface ExpressionShape {
  nodes: number;
  comprehensions: number;
}

/** Counts nodes, depth and comprehensions of a parsed expression; throws ExpressionTooComplex past the limits. */
export function checkExpressionShape(expr: Expr, limits: ExpressionLimits): ExpressionShape {
  let nodes = 0;
  let comprehensions = 0;
  const stack: { e: Expr; depth: number; inLoop: boolean }[] = [{ e: expr, depth: 1, inLoop: false }];
  while (stack.length) {
    const { e, depth, inLoop } = stack.pop()!;
    if (!e) continue;
    if (++nodes > limits.maxNodes) throw new ExpressionTooComplex(`more than ${limits.maxNodes} nodes`);
    if (depth > limits.maxDepth) throw new ExpressionTooComplex(`nested deeper than ${limits.maxDepth}`);
    const next = (child: Expr | undefined, loop = inLoop) => {
      if (child) stack.push({ e: child, depth: depth + 1, inLoop: loop });
    };
    const kind = e.exprKind;
    switch (kind.case) {
      case 'callExpr':
        next(kind.value.target);
        for (const a of kind.value.args) next(a);
        break;
      case 'selectExpr':
        next(kind.value.operand);
        break;
      case 'listExpr':
        for (const el of kind.value.elements) next(el);
        break;
      case 'structExpr':
        for (const entry of kind.value.entries) {
          if (entry.keyKind.case === 'mapKey') next(entry.keyKind.value);
          next(entry.value);
        }
        break;
      case 'comprehensionExpr': {
        if (inLoop) throw new ExpressionTooComplex('a comprehension inside another comprehension');
        if (++comprehensions > limits.maxComprehensions) throw new ExpressionTooComplex(`more than ${limits.maxComprehensions} comprehensions`);
        const c = kind.value;
        next(c.iterRange);
        next(c.accuInit);
        next(c.loopCondition, true);
        next(c.loopStep, true);
        next(c.result);
        break;
      }
      default:
        break;
    }
  }
  return { nodes, comprehensions };
}

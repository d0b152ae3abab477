// The work an organization's profiles may do at run time on one record and in one request, charged by the metered CEL
// functions (characters and list items they read and make) and refused once spent.

/** Thrown by a metered function once the budget is spent; the expression fails and its record falls through. */
export class EvaluationBudgetSpent extends Error {
  constructor(readonly limit: number) {
    super(`the record's evaluation work budget (${limit}) is spent`);
    this.name = 'EvaluationBudgetSpent';
  }
}

/**
 * One budget per CEL environment (evaluation is synchronous, so the profiles of one record run alone against it).
 * Unlimited until `start`; `stop` makes it unlimited again (the built-in profiles run unmetered).
 */
export class EvaluationBudget {
  private left = Infinity;
  private limit = Infinity;

  /** Starts a record's evaluation with `units` to spend. */
  start(units: number): void {
    this.left = units;
    this.limit = units;
  }

  /** Ends the metered part; returns the units spent since `start`. */
  stop(): number {
    const spent = this.limit === Infinity ? 0 : Math.min(this.limit, this.limit - this.left);
    this.left = Infinity;
    this.limit = Infinity;
    return spent;
  }

  /** Charges `units`; throws EvaluationBudgetSpent when that passes the budget (and on every charge after). */
  charge(units: number): void {
    this.left -= units;
    if (this.left < 0) throw new EvaluationBudgetSpent(this.limit);
  }

  /** True once a charge passed the budget. */
  get spent(): boolean {
    return this.left < 0;
  }

  /** The units the current record started with (Infinity when unmetered). */
  get budgetLimit(): number {
    return this.limit;
  }
}

// Issue paths and messages of a zod error, bounded, in the shape every 400 answer carries.
import type { ZodError } from 'zod';
import type { IssueDetail } from './domain-errors.js';

export function zodIssues(err: ZodError): IssueDetail[] {
  return err.issues.slice(0, 50).map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
}

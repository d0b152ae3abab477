// zod schemas of the CloudWatch Logs bodies: the spec body, the native subscription payload and the awslogs envelope.
import { z } from 'zod';

/** Longest event id (after trimming), timestamp string and owner accepted. */
export const MAX_EVENT_ID_LENGTH = 200;
export const MAX_TIMESTAMP_LENGTH = 200;
export const MAX_OWNER_LENGTH = 64;

/** (Each use is its own instance: a zod schema used twice in one document is written once by the OpenAPI generator.)
 * CloudWatch event ids are 56-digit numbers: kept as strings (numbers are written out; big ones arrive quoted). */
export const eventIdSchema = () => z.union([z.string().trim().min(1).max(MAX_EVENT_ID_LENGTH), z.number().int().nonnegative().transform(String)]);

/** ISO 8601 or epoch ms/s, as a string or number; an unparseable value falls back to the message's time, then now. */
const timestampValue = () => z.union([z.string().max(MAX_TIMESTAMP_LENGTH), z.number()]).nullish();

/** CloudWatch Logs names log groups and log streams with 1 to 512 characters; each event keeps both, so both are bounded. */
export const MAX_NAME_LENGTH = 512;

/** Spec 2.4: `{logGroup, logStream, events[{message, timestamp}]}` (an optional `id` per event is used for dedupe). */
export const specBodySchema = z.object({
  logGroup: z.string().trim().min(1).max(MAX_NAME_LENGTH),
  logStream: z.string().trim().min(1).max(MAX_NAME_LENGTH),
  owner: z.string().max(MAX_OWNER_LENGTH).optional(),
  events: z.array(
    z.object({
      id: eventIdSchema().optional(),
      message: z.string(),
      timestamp: timestampValue(),
    }),
  ),
});

/** What a CloudWatch Logs subscription filter delivers (after base64 and gzip decoding). */
export const subscriptionPayloadSchema = z.object({
  messageType: z.string().max(64).default('DATA_MESSAGE'),
  owner: z.string().max(64).optional(),
  logGroup: z.string().max(MAX_NAME_LENGTH),
  logStream: z.string().max(MAX_NAME_LENGTH),
  // Kept on each event only up to CloudWatch's own limits (log-batch-events.ts); more is accepted, counted, not copied.
  subscriptionFilters: z.array(z.string().max(1024)).max(100).optional(),
  policyLevel: z.string().max(64).optional(),
  logEvents: z.array(
    z.object({
      id: eventIdSchema().optional(),
      timestamp: timestampValue(),
      message: z.string(),
      extractedFields: z.record(z.string().max(200), z.unknown()).optional(),
    }),
  ),
});

/** The event a Lambda subscription receives: `{"awslogs":{"data":"<base64 of gzip>"}}`. */
export const awslogsEnvelopeSchema = z.object({
  awslogs: z.object({ data: z.string().min(1) }),
});


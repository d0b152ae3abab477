// zod schema of Datadog webhook bodies: the spec fields, the default webhook template fields and common extras.
import { z } from 'zod';

/** Each field gets its own instance (a zod schema used twice in one document is written once by the OpenAPI generator). */
/** A scalar written by a template variable: kept as text ("" counts as absent where it matters). */
const text = () => z.union([z.string(), z.number(), z.boolean()]).transform(String);
/** Ids stay strings (Datadog event ids exceed 2^53; unquoted big ones arrive as digit strings from the JSON parser). */
const id = () => z.union([z.string().trim().max(200), z.number().int().transform(String)]);
/** ISO 8601, epoch ms or epoch s, as a string or number. */
const time = () => z.union([z.string().max(200), z.number()]);

export const datadogBodySchema = z.object({
  title: text().nullish(),
  /** The event text; `text` (Datadog's event API name) is accepted as an alias. A JSON object is kept as JSON text. */
  body: z.union([z.string(), z.record(z.string().max(200), z.unknown()).transform((o) => JSON.stringify(o))]).nullish(),
  text: z.string().nullish(),
  type: text().nullish(),
  event_type: text().nullish(),
  tags: z.union([z.string(), z.array(z.union([z.string(), z.number()]).transform(String)).max(1000)]).nullish(),
  timestamp: time().nullish(),
  last_updated: time().nullish(),
  date: time().nullish(),
  id: id().nullish(),
  org: z.union([z.object({ id: id().nullish(), name: text().nullish() }), text()]).nullish(),
  alert_transition: text().nullish(),
  alert_id: id().nullish(),
  hostname: text().nullish(),
  priority: text().nullish(),
  link: text().nullish(),
}).refine((d) => [d.title, d.body, d.text, d.id].some((v) => v !== null && v !== undefined && v !== '') || (d.tags !== null && d.tags !== undefined && d.tags.length > 0), {
  message: 'needs at least one of title, body, tags, id (check the webhook payload template)',
});

export type DatadogBody = z.output<typeof datadogBodySchema>;

/** Keys the schema knows; any other key of the body is kept as is in metadata.datadog.extra. */
export const DATADOG_KNOWN_KEYS: ReadonlySet<string> = new Set(Object.keys(datadogBodySchema.shape));

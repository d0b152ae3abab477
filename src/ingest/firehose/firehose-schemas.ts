// zod schema of the Amazon Data Firehose HTTP endpoint delivery request body.
import { z } from 'zod';

/** `{requestId, timestamp, records[{data}]}`; records are checked one by one (a bad record is stored raw, not rejected). */
export const firehoseRequestSchema = z.object({
  requestId: z.string().trim().min(1).max(200).optional(),
  timestamp: z.union([z.number(), z.string().max(64)]).optional(),
  records: z.array(z.unknown()),
});


/** `X-Amz-Firehose-Common-Attributes: {"commonAttributes":{...}}`, the endpoint parameters configured on the stream. */
export const commonAttributesSchema = z.object({
  commonAttributes: z.record(z.string().max(200), z.string().max(1024)),
});

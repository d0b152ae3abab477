// The kinds of control message instances broadcast to each other. Adding a kind is one line in the list below;
// an instance that does not know a kind (an older one during a rolling deploy) ignores it.
import { z } from 'zod';

const id = z.string().min(1).max(256);

export const controlMessageKinds = [
  z.object({ kind: z.literal('revoke_key'), keyId: id }),
  z.object({ kind: z.literal('end_login'), loginSessionId: id }),
  z.object({ kind: z.literal('recognition_profiles_changed'), orgId: id }),
  /** A signed checkpoint of an organization's log was issued (streams that asked for checkpoints send it). */
  z.object({ kind: z.literal('checkpoint'), orgId: id, size: z.number().int().min(0), rootHash: z.string().max(64), note: z.string().max(2048) }),
] as const;

export const controlMessageSchema = z.discriminatedUnion('kind', controlMessageKinds);

export type ControlMessage = z.infer<typeof controlMessageSchema>;
export type ControlKind = ControlMessage['kind'];
export type ControlMessageOf<K extends ControlKind> = Extract<ControlMessage, { kind: K }>;

/** Largest control message read (bytes); anything longer is not one of ours and is dropped unread. */
export const CONTROL_MESSAGE_MAX_BYTES = 4096;

/** The message, or null when the bytes are not a known, well-formed control message. */
export function parseControlMessage(bytes: Buffer): ControlMessage | null {
  if (bytes.length > CONTROL_MESSAGE_MAX_BYTES) return null;
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString());
  } catch {
    return null;
  }
  const parsed = controlMessageSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

// What decoding an OTLP export will build, counted on its bytes before anything is built: nested protobuf messages (read
// from the wire format, guided by the .proto types) or JSON objects and arrays. One pass, no allocation per message.
import protobuf from 'protobufjs';
import { TooLarge } from '../../shared/domain-errors.js';
import { closingQuoteIndex } from '../../shared/input-safety.js';

/**
 * Deepest nesting of protobuf messages decoded (the decoders' own limit, 100 as protoc's, is raised to it while an
 * export is decoded): room for attribute values nested 32 levels in maps (three messages a level) below a span event.
 */
export const MAX_MESSAGE_DEPTH = 128;

function tooMany(max: number): TooLarge {
  return new TooLarge(`the export holds more than ${max} messages (resources, scopes, spans, log records, attributes, values; in JSON, objects and arrays); the limit is ${max} (OTLP_MAX_MESSAGES_PER_EXPORT): send smaller exports`);
}

/**
 * The number of messages nested in the protobuf `bytes` of a `type` message (the message itself not counted), read in
 * one pass over the wire format as protobufjs's decoder reads it: a length-delimited field whose type is a message is
 * entered, every other field (unknown ones too, which the decoder discards) is skipped. Throws TooLarge as soon as the
 * count passes `max`. Where the bytes are not valid protobuf (a length past its message, a bad wire type, messages
 * nested deeper than MAX_MESSAGE_DEPTH) it stops counting: the decoder refuses the body at that same point, having
 * built no more than was counted.
 */
export function countProtobufMessages(type: protobuf.Type, bytes: Uint8Array, max: number): number {
  const reader = protobuf.Reader.create(bytes);
  const outer: { type: protobuf.Type; end: number }[] = [];
  let current = type;
  let end = bytes.length;
  let count = 0;
  try {
    for (;;) {
      if (reader.pos >= end) {
        const parent = outer.pop();
        if (reader.pos > end || !parent) return count;
        current = parent.type;
        end = parent.end;
        continue;
      }
      const tag = reader.uint32();
      const wireType = tag & 7;
      if (wireType !== 2) {
        reader.skipType(wireType);
        continue;
      }
      const length = reader.uint32();
      const start = reader.pos;
      if (start + length > end) return count;
      const nested = current.fieldsById[tag >>> 3]?.resolvedType;
      if (!(nested instanceof protobuf.Type)) {
        reader.pos = start + length;
        continue;
      }
      if (++count > max) throw tooMany(max);
      if (outer.length + 1 > MAX_MESSAGE_DEPTH) return count;
      outer.push({ type: current, end });
      current = nested;
      end = start + length;
    }
  } catch (err) {
    if (err instanceof TooLarge) throw err;
    // A varint or wire type the decoder refuses as well.
    return count;
  }
}

/** How many `{` and `[` the text holds, counting no further than max + 1 (native searches; strings not told apart). */
function bracketsUpTo(text: string, max: number): number {
  let n = 0;
  for (const bracket of ['{', '[']) {
    for (let at = text.indexOf(bracket); at !== -1 && n <= max; at = text.indexOf(bracket, at + 1)) n++;
  }
  return n;
}

/**
 * The number of objects and arrays JSON text holds (the outermost one included), as JSON.parse would build them: `{`
 * and `[` outside strings. Throws TooLarge when it passes `max`. Text with at most `max` brackets in all is settled by
 * native searches.
 */
export function countJsonContainers(text: string, max: number): number {
  const brackets = bracketsUpTo(text, max);
  if (brackets <= max) return brackets;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = closingQuoteIndex(text, i + 1);
      if (i === -1) break;
    } else if ((c === 0x7b || c === 0x5b) && ++count > max) throw tooMany(max);
  }
  return count;
}

// The error of an OTLP body that is not a valid export request of its encoding.
import { InvalidInput } from '../../shared/domain-errors.js';

/** A body that is not a valid export request of its encoding: answered 400, which exporters do not retry. */
export class OtlpDecodeError extends InvalidInput {
  constructor(message: string) {
    super(message);
    this.name = 'OtlpDecodeError';
  }
}

// Every ingest source, one line each: a source is a folder under src/ingest/ and one entry here (docs/architecture.md).
import { cloudWatchSource } from './cloudwatch/cloudwatch-source.js';
import { datadogSource } from './datadog/datadog-source.js';
import { firehoseSource } from './firehose/firehose-source.js';
import type { IngestSource } from './ingest-source.js';
import { otlpSource, type OtlpSettings } from './otlp/otlp-source.js';
import { rawSource } from './raw/raw-source.js';

/** The settings of the sources that have any, each handed only to its own source. */
export interface SourceSettings {
  /** FIREHOSE_MAX_RECORDS. */
  firehoseMaxRecords: number;
  /** The OTLP .proto types (loaded at start), OTLP_MAX_SPANS_PER_EXPORT / OTLP_MAX_LOG_RECORDS_PER_EXPORT / OTLP_MAX_MESSAGES_PER_EXPORT. */
  otlp: OtlpSettings;
}

export function ingestSources(settings: SourceSettings): IngestSource[] {
  return [
    rawSource(),
    cloudWatchSource(),
    firehoseSource({ maxRecords: settings.firehoseMaxRecords }),
    datadogSource(),
    otlpSource(settings.otlp),
  ];
}

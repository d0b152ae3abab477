// Every ingest source, one line each: a source is a folder under src/ingest/ and one entry here (docs/architecture.md).
import { cloudWatchSource } from './cloudwatch/cloudwatch-source.js';
import { datadogSource } from './datadog/datadog-source.js';
import { firehoseSource } from './firehose/firehose-source.js';
import type { IngestSource, SourceSettings } from './ingest-source.js';
import { otlpSource } from './otlp/otlp-source.js';
import { rawSource } from './raw/raw-source.js';

export function ingestSources(settings: SourceSettings): IngestSource[] {
  return [
    rawSource(),
    cloudWatchSource(),
    firehoseSource(settings),
    datadogSource(),
    otlpSource(settings.otlp),
  ];
}

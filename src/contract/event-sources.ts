// The `source` of an event (a field of the API rows, the listing's filter, a metrics label): each ingest source's name
// and the service's own writers. The event log stores it as given; nothing below the routes branches on it.
export const AUDIT_SOURCES = ['raw', 'cloudwatch', 'firehose', 'datadog', 'otlp', 'system', 'operator', 'proxy'] as const;
export type AuditSource = (typeof AUDIT_SOURCES)[number];

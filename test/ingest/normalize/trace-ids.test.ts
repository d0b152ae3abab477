// Tests of trace id notations: traceparent, X-Ray, and text scans.
import { describe, it, expect } from 'vitest';
import { scanTraceIds, traceIdFromTraceparent, xrayTraceId } from '../../../src/ingest/normalize/trace-ids.js';

describe('traceIdFromTraceparent', () => {
  it.each([
    ['00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', '4bf92f3577b34da6a3ce929d0e0e4736'],
    ['00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-00', '4bf92f3577b34da6a3ce929d0e0e4736'],
    [' 01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra ', '4bf92f3577b34da6a3ce929d0e0e4736'],
  ])('reads %j', (value, id) => {
    expect(traceIdFromTraceparent(value)).toBe(id);
  });

  it.each([
    ['ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01'],
    ['00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-01'],
    ['00-4bf92f3577b34da6a3ce929d0e0e4736'],
    [''],
    ['x'.repeat(10_000)],
  ])('rejects %j', (value) => {
    expect(traceIdFromTraceparent(value)).toBeNull();
  });
});

describe('xrayTraceId', () => {
  it.each([
    ['1-5759e988-bd862e3fe1be46a994272793', '1-5759e988-bd862e3fe1be46a994272793'],
    ['Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1', '1-5759e988-bd862e3fe1be46a994272793'],
    ['Self=1-67891233-12456789abcdef012345678;Root=1-5759e988-bd862e3fe1be46a994272793', '1-5759e988-bd862e3fe1be46a994272793'],
  ])('reads %j', (value, id) => {
    expect(xrayTraceId(value)).toBe(id);
  });

  it.each([['2-5759e988-bd862e3fe1be46a994272793'], ['1-5759e988-bd862e3f'], ['Root=1-xyz'], ['']])('rejects %j', (value) => {
    expect(xrayTraceId(value)).toBeNull();
  });
});

describe('scanTraceIds', () => {
  it.each([
    ['GET /x trace_id=abc123 span_id=1', { explicit: 'abc123', traceparent: null, xray: null }],
    ['dd.trace_id=1234567890123456789 dd.span_id=1', { explicit: '1234567890123456789', traceparent: null, xray: null }],
    ['traceId: "f00d" ok', { explicit: 'f00d', traceparent: null, xray: null }],
    ['traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', { explicit: null, traceparent: '4bf92f3577b34da6a3ce929d0e0e4736', xray: null }],
    ['X-Amzn-Trace-Id: Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1', { explicit: null, traceparent: null, xray: '1-5759e988-bd862e3fe1be46a994272793' }],
    ['XRAY TraceId: 1-5759e988-bd862e3fe1be46a994272793\tSegmentId: 1', { explicit: null, traceparent: null, xray: '1-5759e988-bd862e3fe1be46a994272793' }],
    ['mytrace_id=nope subtrace_id=no', { explicit: null, traceparent: null, xray: null }],
    ['nothing here', { explicit: null, traceparent: null, xray: null }],
  ])('scans %j', (text, expected) => {
    expect(scanTraceIds(text)).toEqual(expected);
  });

  it('only scans the first 64 KiB', () => {
    expect(scanTraceIds('x'.repeat(70_000) + ' trace_id=late').explicit).toBeNull();
    expect(scanTraceIds('trace_id=early ' + 'x'.repeat(70_000)).explicit).toBe('early');
  });
});

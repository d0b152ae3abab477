// The profile engine: compile-time bounds, an expression that fails falls through to the next profile, the time fallback.
import { describe, expect, it } from 'vitest';
import { compileProfile, emptyView, messageView, ProfileCompileError, recognize, type Profile } from '../../../src/ingest/recognition/index.js';
import { createRecognizer, cutToBytes } from '../../../src/ingest/recognition/recognizer.js';

const base: Profile = { id: 'p', version: 1, description: '', source: '', when: 'true', fields: {} };

describe('compileProfile', () => {
  it('names the expression that does not parse', () => {
    expect(() => compileProfile({ ...base, fields: { tool: 'attributes.' } })).toThrow(ProfileCompileError);
    expect(() => compileProfile({ ...base, fields: { tool: 'attributes.' } })).toThrow(/^fields\.tool:/);
  });

  it('refuses an expression longer than the limit, with too many nodes, or with nested comprehensions', () => {
    expect(() => compileProfile({ ...base, when: `'${'a'.repeat(2100)}' == ''` })).toThrow(/longer than 2000/);
    expect(() => compileProfile({ ...base, when: `size([${Array.from({ length: 400 }, (_, i) => i).join(', ')}]) > 0` })).toThrow(/more than 300 nodes/);
    expect(() => compileProfile({ ...base, when: Array.from({ length: 60 }, (_, i) => `${i}`).join(' + ') + ' > 0' })).toThrow(/nested deeper than 40/);
    expect(() => compileProfile({ ...base, when: '[1, 2].all(x, [3, 4].exists(y, x < y))' })).toThrow(/inside another comprehension/);
    expect(() => compileProfile({ ...base, when: '[1].all(x, x > 0) && [1].all(x, x > 0) && [1].all(x, x > 0) && [1].all(x, x > 0) && [1].all(x, x > 0)' })).toThrow(
      /more than 4 comprehensions/,
    );
  });
});

describe('recognize', () => {
  const view = messageView({ source: 'raw', message: '{"tool":"search"}', fields: { tool: 'search', took: '12ms' }, receivedMs: Date.parse('2030-01-01T00:00:00Z') });

  it('a failing expression makes the record fall through to the next profile, counted', () => {
    const broken = compileProfile({ ...base, id: 'broken', fields: { tool: 'attributes.missing_key' } });
    const working = compileProfile({ ...base, id: 'working', fields: { tool: 'attributes.tool', latencyMs: 'attributes.took', action: "'blocked'" } });
    const out = recognize(view, [broken, working]);
    expect(out.failures).toEqual([{ profileId: 'broken', expression: 'fields.tool', error: expect.stringContaining('missing_key') }]);
    expect(out.recognized).toMatchObject({ profileId: 'working', toolName: 'search', latencyMs: 12, action: 'deny', actionWord: 'blocked' });
  });

  it('a `when` that is not true, or fails, skips the profile', () => {
    const no = compileProfile({ ...base, id: 'no', when: "source == 'otlp'" });
    const err = compileProfile({ ...base, id: 'err', when: 'attributes.nope == 1' });
    const out = recognize(view, [no, err]);
    expect(out.recognized).toBeNull();
    expect(out.failures.map((f) => f.profileId)).toEqual(['err']);
  });

  it('an emitter time of 0 or none falls back to the record time, then to when it was received', () => {
    const p = compileProfile({ ...base, fields: { time: '0' } });
    const received = emptyView('otlp', 'log', Date.parse('2030-01-01T00:00:00Z'));
    expect(recognize(received, [p]).recognized!.occurredAt.toISOString()).toBe('2030-01-01T00:00:00.000Z');
    const observed = { ...received, log: { ...received.log, observedMs: Date.parse('2029-05-05T05:05:05Z') } };
    expect(recognize(observed, [p]).recognized!.occurredAt.toISOString()).toBe('2029-05-05T05:05:05.000Z');
  });

  it('an unknown action word is kept as rawAction, not mapped', () => {
    const p = compileProfile({ ...base, fields: { action: "'quarantined'" } });
    expect(recognize(view, [p]).recognized).toMatchObject({ action: null, rawAction: 'quarantined', actionWord: null });
  });

  it('the view is bounded: an expression iterates at most 256 keys of a huge map', () => {
    const fields = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]));
    const big = messageView({ source: 'raw', message: null, fields, receivedMs: 0 });
    const p = compileProfile({ ...base, fields: { latencyMs: 'size(attributes)' } });
    expect(recognize(big, [p]).recognized!.latencyMs).toBe(256);
  });
});

describe('guards', () => {
  const view = messageView({ source: 'raw', message: null, fields: { tool: 'search', kind: 'x' }, receivedMs: 0 });

  it("skips a profile whose top-level conditions on plain variables or attributes fail, without evaluating it", () => {
    // Each `when` would fail (a missing key) if it were evaluated: skipped by its guard, nothing is counted.
    const whens = ["source == 'otlp' && attributes.nope == 1", "'missing' in attributes && attributes.nope == 1", "attributes['kind'] in ['y', 'z'] && attributes.nope == 1", "attributes.tool == 'other' && attributes.nope == 1"];
    for (const when of whens) {
      const p = compileProfile({ ...base, id: 'g', when });
      expect(p.guards.length).toBeGreaterThan(0);
      expect(recognize(view, [p])).toEqual({ recognized: null, failures: [] });
    }
    // Guards that pass leave the rest to CEL: here it fails, and is counted.
    const passing = compileProfile({ ...base, id: 'g', when: "source == 'raw' && 'tool' in attributes && attributes.tool == 'search' && attributes.nope == 1" });
    expect(recognize(view, [passing]).failures.map((f) => f.expression)).toEqual(['when']);
  });

  it('a guard-skipped profile costs nothing against the budget', () => {
    const skipped = compileProfile({ ...base, id: 'skipped', when: "source == 'otlp' && [1, 2].exists(x, x > 1)" });
    const reads = compileProfile({ ...base, id: 'reads', fields: { tool: 'attributes.tool' } });
    expect(recognize(view, [skipped, reads], reads.cost).recognized?.profileId).toBe('reads');
    expect(recognize(view, [reads], reads.cost - 1).failures.map((f) => f.expression)).toEqual(['cost']);
  });
});

describe('a request\'s unrecognized tallies', () => {
  it('counts by source and name, keeps the first sample cut at a character boundary, and names past the limit as (other)', () => {
    const r = createRecognizer({ org: [], builtin: [], maxCostPerRecord: 1, maxNames: 2, sampleBytes: 5 });
    let made = 0;
    const sample = (text: string) => () => {
      made++;
      return text;
    };
    for (const name of ['a', 'b', 'a', 'c', 'd']) {
      const view = emptyView('otlp', 'span', 0);
      view.name = name;
      r.unrecognized(view, sample(`ééé-${name}`));
    }
    expect(r.tallies()).toEqual([
      { source: 'otlp', name: 'a', count: 2, sample: 'éé' },
      { source: 'otlp', name: 'b', count: 1, sample: 'éé' },
      { source: 'otlp', name: '(other)', count: 2, sample: 'éé' },
    ]);
    // A sample is made once per tallied name, not per record.
    expect(made).toBe(3);
    expect(cutToBytes('abc', 5)).toBe('abc');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CountingSlicer } from '../test/support/counting-slicer.js';
import { decodeMentionRow, decodeSpanRow } from './mentions.js';
import {
  bodySchema,
  bodySchemaById,
  decodeMentions,
  decodeMentionsInSlices,
  encodeMentions,
  mentionRowCount,
  type WireBody,
  type WireMention,
} from './format.js';
import { resolveTargets, resolveTargetsInSlices } from './wire.js';

describe('packed mention rows (format 2.0)', () => {
  it('round-trips every field, leaving defaults out', () => {
    const rows: WireMention[] = [
      { target: 0, span: [0, 32] },
      { target: 7, span: [10, 20], chunk: 3, count: 2, confidence: 0.65 },
      { target: 12, description: '', valid_from: '2026-01-01T00:00:00.000Z', valid_to: null },
      { target: 3, description: 'a, b; 100% sure', valid_from: null, valid_to: '2026-02-01T00:00:00.000Z' },
      { target: 4, span: [1, 2], confidence: 1e-7 },
    ];
    const text = encodeMentions(rows);
    assert.equal(
      text,
      '0,0,32;7,10,20,c3,n2,p0.65;12,=,f2026-01-01T00:00:00.000Z,t-;3,=a%2C b%3B 100%25 sure,f-,t2026-02-01T00:00:00.000Z;4,1,2,p1e-7',
    );
    assert.deepEqual(decodeMentions(text, true), { rows });
    assert.equal(mentionRowCount(text), rows.length);
    assert.equal(
      encodeMentions([{ target: 1, span: [0, 1], chunk: 0, count: 1, confidence: 1 }]),
      '1,0,1',
      'chunk 0, count 1, confidence 1 are left out',
    );
  });

  it('decodes no rows from an empty string, and counts rows as sent (1.x arrays too)', () => {
    assert.deepEqual(decodeMentions('', true), { rows: [] });
    assert.equal(mentionRowCount(''), 0);
    assert.equal(mentionRowCount([{}, {}]), 2);
    assert.equal(mentionRowCount(42), 0);
  });

  const refused: [string, string, number, RegExp][] = [
    ['no target', ',0,3', 0, /target index/],
    ['a negative target', '-1,0,3', 0, /target index/],
    ['a span without its end', '0,0,32;1,5', 1, /span/],
    ['a non-integer span', '0,0.5,3', 0, /span/],
    ['a count of 0', '0,0,3,n0', 0, /count/],
    ['a confidence above 1', '0,0,3,p1.5', 0, /confidence/],
    ['a negative confidence', '0,0,3,p-0.5', 0, /confidence/],
    ['a validity that is not a date', '0,0,3,flast spring', 0, /ISO 8601/],
    ['a field twice', '0,0,3,n2,n3', 0, /twice/],
    ['an unknown field', '0,0,3,x1', 0, /unrecognized field/],
    ['a stray escape in a description', '0,=50%', 0, /escapes only/],
    ['an empty row', '0,0,3;;1,0,3', 1, /target index/],
  ];
  for (const [name, text, row, issue] of refused) {
    it(`refuses ${name}, naming the row`, () => {
      const decoded = decodeMentions(text, true);
      assert.ok('issue' in decoded, `${text} decoded`);
      assert.equal(decoded.row, row);
      assert.match(decoded.issue, issue);
    });
  }

  it('ignores unknown fields of a newer minor when not strict', () => {
    assert.deepEqual(decodeMentions('0,0,3,x{"new":1},n2', false), { rows: [{ target: 0, span: [0, 3], count: 2 }] });
  });
});

describe('the one-scan decoder of the usual row (decodeSpanRow)', () => {
  // Valid rows, then each mutated a character or a field at a time: the scan must give exactly
  // what the full decoder gives, or leave the row to it (null).
  const valid = [
    '0,0,96',
    '12,97,174,n2',
    '280,0,96,p0.75,f2026-01-01T00:00:00.000Z,t-',
    '3,5,9,c2,n3,p1e-7,f-,t2026-02-01T00:00:00.000Z',
    '9999999999,0,1,c0',
    '4,1,2,t2026-02-01T00:00:00+02:00,f2025-01-01T00:00:00Z',
  ];
  const mutations = (row: string): string[] => {
    const out = new Set<string>();
    const fields = row.split(',');
    const swaps = [
      '',
      '-1',
      '00',
      '0',
      '1',
      '=x',
      'x1',
      'n0',
      'n1',
      'c',
      'c01',
      'p1',
      'p1.5',
      'p.5',
      'f-',
      't-',
      'f2026-13-01T00:00:00Z',
      '12345678901',
    ];
    for (let i = 0; i < fields.length; i++) {
      for (const swap of swaps) out.add([...fields.slice(0, i), swap, ...fields.slice(i + 1)].join(','));
      out.add([...fields.slice(0, i), ...fields.slice(i + 1)].join(','));
      out.add([...fields.slice(0, i + 1), fields[i]!, ...fields.slice(i + 1)].join(','));
    }
    for (let i = 0; i <= row.length; i++)
      for (const char of ['', ',', ' ', '0', 'a', '.', '%']) out.add(row.slice(0, i) + char + row.slice(i + 1));
    return [...out];
  };
  it('decodes every row as decodeMentionRow does, or leaves it to it', () => {
    let scanned = 0;
    for (const row of valid.flatMap((text) => [text, ...mutations(text)])) {
      const fast = decodeSpanRow(row);
      for (const strict of [true, false]) {
        if (fast !== null) assert.deepEqual(fast, decodeMentionRow(row, 0, strict), row);
      }
      if (fast !== null) scanned += 1;
    }
    for (const row of valid) assert.notEqual(decodeSpanRow(row), null, `${row}: the usual row is scanned`);
    assert.ok(scanned > 100, `${scanned} rows scanned`);
  });
});

describe('decoding an episode of many rows, in slices', () => {
  it('gives the rows decodeMentions gives, and the same first bad row, with a turn of the event loop per 64 rows', async () => {
    const rows: WireMention[] = Array.from({ length: 50 * 64 }, (_, i) => ({
      target: i % 7,
      span: [i, i + 10],
      ...(i % 3 ? { chunk: i } : {}),
    }));
    const text = encodeMentions(rows);
    const slicer = new CountingSlicer();
    assert.deepEqual(await decodeMentionsInSlices(text, true, slicer), decodeMentions(text, true));
    assert.ok(slicer.pauses >= rows.length / 64, `${slicer.pauses} turns`);
    const broken = `${text};x,1,2;${text}`;
    assert.deepEqual(await decodeMentionsInSlices(broken, true, new CountingSlicer()), decodeMentions(broken, true));
    assert.deepEqual(await decodeMentionsInSlices('', true, new CountingSlicer()), { rows: [] });
  });

  it('resolves one episode of many rows with turns between its rows', async () => {
    const rows: WireMention[] = Array.from({ length: 40 * 64 }, (_, i) => ({ target: i % 2, span: [0, 1] }));
    const body = {
      episodes: [
        {
          id: 'e',
          kind: 'document',
          name: null,
          metadata: {},
          created_at: '2026-01-01T00:00:00.000Z',
          chunks: [],
          mentions: encodeMentions(rows),
        },
      ],
      entities: [{ id: 'a' }, { id: 'b' }],
      facts: [],
    } as unknown as WireBody;
    const slicer = new CountingSlicer();
    const sliced = await resolveTargetsInSlices(body, true, slicer);
    assert.deepEqual(sliced, resolveTargets(body, true));
    assert.ok(slicer.pauses >= rows.length / 64, `${slicer.pauses} turns for one episode of ${rows.length} rows`);
  });
});

describe('the body schema read strictly', () => {
  // seal.ts openSnapshot uses the body as sent once the strict schema accepts it: that holds only
  // while the schema changes nothing (no default, transform, coercion or stripping).
  const caps = { maxEpisodes: 10, maxEntities: 10, maxFacts: 10, maxMentions: 10, maxChunks: 10 };
  const episode = {
    id: '0b0e4b8e-3f39-4b8e-9d6c-2f1f5c7a9e10',
    kind: 'conversation',
    name: 'a call',
    metadata: { topic: 'offices', nested: { list: [1, 'two', null, { deep: true }] }, '10': 'ten', '9': 'nine' },
    created_at: '2026-11-24T10:00:00.000+02:00',
    chunks: [
      {
        index: 0,
        text: 'Alice manages the Berlin office.',
        source: {
          type: 'message',
          role: 'user',
          message_index: 3,
          start: 0,
          end: 31,
          file_index: 1,
          filename: 'call.mp3',
          media_type: 'audio/mpeg',
          page: 2,
          start_s: 1.5,
          end_s: 3.25,
          heading: 'Intro',
          method: 'whisper',
        },
        vector: 'AAAAAA==',
      },
      { index: 1, text: '', source: { type: 'text' }, vector: null },
    ],
  };
  const entity = {
    id: 'e1',
    key: 'alice',
    name: 'Alice',
    category: 'person',
    aliases: ['Alice'],
    alias_keys: ['alice'],
    description: '',
    weight: 2,
    name_vector: null,
  };
  const fact = { id: 'f1', subject_id: 'e1', predicate: 'manage', object_id: 'e1', description: 'd', weight: 1, confidence: 0.5 };
  const byId = [
    { chunk: 0, target_id: 'e1', count: 2, confidence: 0.5, span: [0, 5] },
    { chunk: 1, target_id: 'f1', description: 'x', valid_from: null, valid_to: '2026-01-01T00:00:00Z' },
  ];
  const bodies: [string, unknown, ReturnType<typeof bodySchema> | ReturnType<typeof bodySchemaById>][] = [
    ['2.x', { episodes: [{ ...episode, mentions: '0,0,5,n2' }], entities: [entity], facts: [fact] }, bodySchema(caps, true)],
    ['1.x', { episodes: [{ ...episode, mentions: byId }], entities: [entity], facts: [fact] }, bodySchemaById(caps, true)],
  ];
  for (const [version, body, schema] of bodies) {
    it(`gives back the ${version} body as sent, every optional field in it`, () => {
      const parsed = schema.safeParse(body);
      assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
      assert.deepStrictEqual(parsed.data, body);
    });
  }
});

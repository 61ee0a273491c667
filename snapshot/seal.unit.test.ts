import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { CompactSign, importJWK } from 'jose';
import { canonicalJsonBytes } from '../core/canonical-json.js';
import { jsonTextDigest } from '../core/json-body.js';
import { generateKeysetEntry, type SigningKeyset } from '../core/signing-keyset.js';
import { CountingSlicer } from '../test/support/counting-slicer.js';
import {
  decodeFloat16,
  decodeInt8,
  decodeMentions,
  encodeMentions,
  type WireMention,
  digestOf,
  type WireBody,
  encodeFloat16,
  encodeInt8,
  headerOf,
  SNAPSHOT_FORMAT_VERSION,
  type SnapshotBody,
} from './format.js';
import { toWire, resolveTargets } from './wire.js';
import { PreparedSnapshotCache } from './prepared-cache.js';
import { openedOf, openPrepared, openSnapshot, sameJsonText, sealSnapshot, SnapshotError, type OpenContext } from './seal.js';
import { SnapshotGraph } from './snapshot-graph.js';

const DIMS = 4;
const TENANT = 'tenant-a';
const MODEL = 'test/model';
const caps = { maxEpisodes: 10, maxEntities: 10, maxFacts: 10, maxMentions: 20, maxChunks: 10 };

/** What a device create does first: one more document episode (one chunk, no vector) in the held graph; its id. */
function addDocument(graph: SnapshotGraph, text: string): string {
  const id = randomUUID();
  graph.addEpisode({
    id,
    kind: 'document',
    name: null,
    metadata: {},
    created_at: '2026-11-26T10:00:00.000Z',
    chunks: [{ index: 0, text, source: { type: 'text' }, vector: null }],
  });
  return id;
}

function sampleBody(): SnapshotBody {
  const episode = randomUUID();
  return {
    episodes: [
      {
        id: episode,
        kind: 'document',
        name: null,
        metadata: { topic: 'offices' },
        created_at: '2026-11-24T10:00:00.000Z',
        chunks: [
          {
            index: 0,
            text: 'Alice manages the Berlin office.',
            source: { type: 'text' },
            vector: encodeFloat16(new Float32Array([0.5, -0.5, 0.5, -0.5])),
          },
        ],
      },
    ],
    entities: [
      {
        id: 'e1',
        key: 'alice',
        name: 'Alice',
        category: 'person',
        aliases: ['Alice'],
        alias_keys: ['alice'],
        description: 'Alice manages the Berlin office.',
        weight: 1,
        name_vector: encodeInt8(new Float32Array([1, 0, 0, 0])),
      },
      {
        id: 'e2',
        key: 'berlin office',
        name: 'Berlin office',
        category: 'place',
        aliases: [],
        alias_keys: ['berlin office'],
        description: '',
        weight: 1,
        name_vector: null,
      },
    ],
    facts: [
      {
        id: 'f1',
        subject_id: 'e1',
        predicate: 'manages',
        object_id: 'e2',
        description: 'Alice manages the Berlin office.',
        weight: 1,
        confidence: 0.9,
      },
    ],
    mentions: [
      {
        episode_id: episode,
        chunk: 0,
        target_id: 'e1',
        kind: 'entity',
        count: 1,
        confidence: 1,
        description: 'Alice manages the Berlin office.',
      },
      { episode_id: episode, chunk: 0, target_id: 'e2', kind: 'entity', count: 1, confidence: 1, description: '' },
      {
        episode_id: episode,
        chunk: 0,
        target_id: 'f1',
        kind: 'fact',
        count: 1,
        confidence: 0.9,
        description: 'Alice manages the Berlin office.',
      },
    ],
  };
}

const keyset = async (): Promise<SigningKeyset> => ({ keys: [{ ...(await generateKeysetEntry('Ed25519')), status: 'active' }] });

async function sealed(ks: SigningKeyset, body = sampleBody(), graphId: string = randomUUID()): Promise<Record<string, unknown>> {
  const snapshot = await sealSnapshot({ graphId, tenantId: TENANT, embeddingModel: MODEL, body }, ks);
  return JSON.parse(Buffer.concat(snapshot.pieces).toString('utf8')) as Record<string, unknown>;
}

const context = (ks: SigningKeyset, overrides: Partial<OpenContext> = {}): OpenContext => ({
  tenantId: TENANT,
  embeddingModel: MODEL,
  dimensions: DIMS,
  caps,
  keyset: ks,
  ...overrides,
});

/** Re-signs a changed header with the service key (what only the service can do). */
async function resign(ks: SigningKeyset, document: Record<string, unknown>): Promise<Record<string, unknown>> {
  const key = ks.keys[0]!;
  const signature = await new CompactSign(canonicalJsonBytes(headerOf(document)))
    .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: 'engram-snapshot+jws' })
    .sign(await importJWK(key.private_jwk, 'EdDSA'));
  return { ...document, signature };
}

const rejects = async (promise: Promise<unknown>, code: string, path?: RegExp): Promise<void> => {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof SnapshotError, `expected a SnapshotError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    if (path) assert.match(error.path, path);
    return true;
  });
};

describe('snapshot sealing and opening', () => {
  it('round-trips: the streamed canonical body is the digest of the parsed body', async () => {
    const ks = await keyset();
    const document = await sealed(ks);
    assert.equal(document.digest, digestOf(document.body));
    const opened = await openSnapshot(document, context(ks));
    assert.equal(opened.body.entities.length, 2);
    assert.equal(opened.graphId, document.graph_id);
  });

  it('sends mentions inside their episodes, descriptions found in chunk text as spans, and opens them back', async () => {
    const ks = await keyset();
    const wire = await toWire(sampleBody());
    assert.equal(wire.episodes[0]!.mentions, '0,0,32;1,=;2,0,32,p0.9', 'one string of rows per episode');
    const rows = rowsOf(wire);
    assert.deepEqual(
      rows[0],
      { target: 0, span: [0, 'Alice manages the Berlin office.'.length] },
      'targets by index: entities, then facts',
    );
    assert.deepEqual(rows[1], { target: 1, description: '' }, 'defaults (chunk 0, count 1, confidence 1) are left out');
    assert.equal(rows[2]!.target, 2, 'the first fact follows the entities');
    assert.equal(rows[2]!.confidence, 0.9);
    const body = sampleBody();
    const document = await sealed(ks, body);
    const opened = await openSnapshot(document, context(ks));
    assert.deepEqual(opened.body.mentions, body.mentions);
    const outside = structuredClone(document.body) as WireBody;
    editRows(outside, (rows) => void (rows[0]!.span = [0, 999]));
    const resealed = await resign(ks, { ...document, body: outside, digest: digestOf(outside) });
    await rejects(openSnapshot(resealed, context(ks)), 'snapshot_invalid', /mentions\.0\.span/);
  });

  it('treats {} as a new, empty graph', async () => {
    const opened = await openSnapshot({}, context(await keyset()));
    assert.deepEqual(opened.body, { episodes: [], entities: [], facts: [], mentions: [] });
  });

  const tampering: [string, (document: Record<string, unknown>) => Record<string, unknown>, string][] = [
    ['a changed header field', (d) => ({ ...d, graph_id: randomUUID() }), 'snapshot_signature_invalid'],
    ['a changed count', (d) => ({ ...d, counts: { ...(d.counts as object), entities: 7 } }), 'snapshot_signature_invalid'],
    ['a removed signature', (d) => ({ ...d, signature: 'x' }), 'snapshot_signature_invalid'],
    ['a changed entity name', (d) => withBody(d, (b) => void (b.entities[0]!.name = 'Mallory')), 'snapshot_digest_mismatch'],
    ['a truncated mention list', (d) => withBody(d, (b) => editRows(b, (rows) => void rows.pop())), 'snapshot_digest_mismatch'],
    [
      'an added episode field',
      (d) => withBody(d, (b) => void ((b.episodes[0] as unknown as Record<string, unknown>).extra = 1)),
      'snapshot_invalid',
    ],
    ['a wrong format name', (d) => ({ ...d, format: 'other' }), 'snapshot_invalid'],
    ['a non-object', () => [] as unknown as Record<string, unknown>, 'snapshot_invalid'],
  ];
  for (const [name, change, code] of tampering) {
    it(`refuses ${name} with ${code}`, async () => {
      const ks = await keyset();
      await rejects(openSnapshot(change(await sealed(ks)), context(ks)), code);
    });
  }

  it('refuses a snapshot signed by a key the service does not hold (forged)', async () => {
    const forged = await sealed(await keyset());
    await rejects(openSnapshot(forged, context(await keyset())), 'snapshot_signature_invalid');
  });

  it('refuses another tenant and another embedding model', async () => {
    const ks = await keyset();
    const document = await sealed(ks);
    await rejects(openSnapshot(document, context(ks, { tenantId: 'tenant-b' })), 'snapshot_tenant_mismatch');
    await rejects(openSnapshot(document, context(ks, { embeddingModel: 'other/model' })), 'snapshot_model_mismatch');
  });

  it('refuses a newer major version, accepts a newer minor and ignores its unknown fields', async () => {
    const ks = await keyset();
    const document = await sealed(ks);
    await rejects(openSnapshot(await resign(ks, { ...document, format_version: '3.0' }), context(ks)), 'snapshot_version_unsupported');
    await rejects(openSnapshot(await resign(ks, { ...document, format_version: '0.9' }), context(ks)), 'snapshot_version_unsupported');
    const body = structuredClone(document.body) as Record<string, unknown>;
    (body.episodes as Record<string, unknown>[])[0]!.mood = 'new in 2.1';
    body.summaries = [];
    const newer = await resign(ks, { ...document, format_version: '2.1', body, digest: digestOf(body), future_header: true });
    const opened = await openSnapshot(newer, context(ks));
    assert.equal(opened.body.episodes.length, 1);
  });

  it('opens a newer-minor (2.1) snapshot with unknown fields at every level, updates it, and the re-sealed 2.0 opens strictly', async () => {
    const ks = await keyset();
    const document = await sealed(ks);
    const body = structuredClone(document.body) as Record<string, unknown> & WireBody;
    const extra = (target: object): void => void ((target as Record<string, unknown>).added_in_1_1 = { any: ['thing'] });
    extra(body);
    extra(body.episodes[0]!);
    extra(body.episodes[0]!.chunks[0]!);
    extra(body.episodes[0]!.chunks[0]!.source);
    body.episodes[0]!.mentions += ',x{"any":1}'; // an unknown field in a row
    extra(body.entities[0]!);
    extra(body.facts[0]!);
    const newer = await resign(ks, {
      ...document,
      format_version: '2.1',
      counts: { ...(document.counts as object), added_in_1_1: 3 },
      added_in_1_1: 'header',
      body,
      digest: digestOf(body),
    });
    const opened = await openSnapshot(newer, context(ks));
    // What a device create does: the graph held in memory, one more episode merged in, sealed again.
    const graph = new SnapshotGraph(opened.body, DIMS);
    const episode = addDocument(graph, 'Alice visits Paris.');
    await graph.write(
      { tenantId: TENANT, collectionId: opened.graphId },
      [],
      [],
      [{ memoryId: episode, chunkIndex: 0, kind: 'entity', targetId: 'e1', count: 1, confidence: 1, description: 'Alice' }],
    );
    const resealed = await sealed(ks, await graph.toBody(), opened.graphId);
    assert.equal(resealed.format_version, SNAPSHOT_FORMAT_VERSION);
    assert.doesNotMatch(JSON.stringify(resealed), /added_in_1_1/, 'unknown fields are dropped, as documented');
    const reopened = await openSnapshot(resealed, context(ks));
    assert.equal(reopened.body.episodes.length, 2);
    assert.equal(reopened.body.entities.find((entity) => entity.id === 'e1')!.weight, 2);
  });

  it('opens 1.0 and 1.1 snapshots (mentions by target id) as before: strictly, and a newer 1.x minor without its unknown fields', async () => {
    const ks = await keyset();
    const document = await sealed(ks);
    const current = await openSnapshot(document, context(ks));
    /** The 1.x wire form of the same body: every mention with its chunk and its target's id. */
    const byId = (): Record<string, unknown> & { episodes: Record<string, unknown>[] } =>
      structuredClone(resolveTargets(structuredClone(document.body) as WireBody).body) as unknown as Record<string, unknown> & {
        episodes: Record<string, unknown>[];
      };
    for (const version of ['1.0', '1.1']) {
      const body = byId();
      const older = await resign(ks, { ...document, format_version: version, body, digest: digestOf(body) });
      const opened = await openSnapshot(older, context(ks));
      assert.deepEqual(opened.body, current.body, `${version} opens to the same graph`);
      const extra = byId();
      extra.episodes[0]!.mood = 'unknown';
      const strict = await resign(ks, { ...document, format_version: version, body: extra, digest: digestOf(extra) });
      await rejects(openSnapshot(strict, context(ks)), 'snapshot_invalid', /episodes\.0/);
    }
    const body = byId();
    body.episodes[0]!.mood = 'new in 1.2';
    const newer = await resign(ks, { ...document, format_version: '1.2', body, digest: digestOf(body) });
    assert.deepEqual((await openSnapshot(newer, context(ks))).body, current.body);
    // A 1.x mention needs its target id (a 2.0 row is not a 1.x row).
    const mixed = await resign(ks, { ...document, format_version: '1.1' });
    await rejects(openSnapshot(mixed, context(ks)), 'snapshot_invalid', /episodes\.0\.mentions/);
  });

  it('sends mentions smaller than 1.1 did, and refuses a target index past the targets', async () => {
    const ks = await keyset();
    const document = await sealed(ks);
    const wire = document.body as WireBody;
    const asById = resolveTargets(wire).body.episodes[0]!.mentions;
    assert.ok(
      Buffer.byteLength(JSON.stringify(wire.episodes[0]!.mentions)) * 2 < Buffer.byteLength(JSON.stringify(asById)),
      'one string of rows, an index in place of an id',
    );
    const body = structuredClone(wire);
    editRows(body, (rows) => void (rows[0]!.target = 3));
    await rejects(
      openSnapshot(await resign(ks, { ...document, body, digest: digestOf(body) }), context(ks)),
      'snapshot_invalid',
      /mentions\.0\.target$/,
    );
  });

  it('carries the validity of fact mentions (1.1) through a device update, seal and open', async () => {
    const ks = await keyset();
    const opened = await openSnapshot(await sealed(ks), context(ks));
    const graph = new SnapshotGraph(opened.body, DIMS);
    const episode = addDocument(graph, 'Alice no longer manages the Berlin office.');
    const ended = new Date('2025-06-01T00:00:00.000Z');
    await graph.write(
      { tenantId: TENANT, collectionId: opened.graphId },
      [],
      [],
      [
        {
          memoryId: episode,
          chunkIndex: 0,
          kind: 'fact',
          targetId: 'f1',
          count: 1,
          confidence: 1,
          description: 'no longer',
          validFrom: null,
          validTo: ended,
        },
      ],
    );
    const resealed = await sealed(ks, await graph.toBody(), opened.graphId);
    assert.equal(resealed.format_version, SNAPSHOT_FORMAT_VERSION);
    const reopened = await openSnapshot(resealed, context(ks));
    const row = reopened.body.mentions.find((mention) => mention.episode_id === episode)!;
    assert.equal(row.valid_from, null);
    assert.equal(row.valid_to, ended.toISOString());
    const older = reopened.body.mentions.find((mention) => mention.episode_id !== episode && mention.target_id === 'f1')!;
    assert.ok(!('valid_from' in older) && !('valid_to' in older), 'a mention without validity stays without it');
  });

  it('refuses validity that is malformed, inverted or on an entity mention', async () => {
    const ks = await keyset();
    const document = await sealed(ks);
    const cases: [string, (body: WireBody) => void, RegExp][] = [
      // A row that does not decode is named by its index.
      ['not a date', (body) => editRows(body, (rows) => void (rows[2]!.valid_from = 'last spring')), /mentions\.2$/],
      [
        'ends before it starts',
        (body) =>
          editRows(body, (rows) => {
            rows[2]!.valid_from = '2025-06-01T00:00:00.000Z';
            rows[2]!.valid_to = '2025-01-01T00:00:00.000Z';
          }),
        /mentions\.2\.valid_to/,
      ],
      [
        'on an entity',
        (body) => editRows(body, (rows) => void (rows[0]!.valid_to = '2025-01-01T00:00:00.000Z')),
        /mentions\.0\.valid_from/,
      ],
    ];
    for (const [what, change, path] of cases) {
      const body = structuredClone(document.body) as WireBody;
      change(body);
      const changed = await resign(ks, { ...document, body, digest: digestOf(body) });
      await rejects(openSnapshot(changed, context(ks)), 'snapshot_invalid', path).catch((error: unknown) => {
        throw new Error(`${what}: ${String(error)}`);
      });
    }
  });

  it('caps the mentions of all episodes together before verifying anything', async () => {
    const ks = await keyset();
    const document = await sealed(ks);
    const body = structuredClone(document.body) as WireBody;
    const rows = (n: number) => encodeMentions(Array.from({ length: n }, (_, i) => ({ target: i, description: '' })));
    body.episodes[0]!.mentions = rows(caps.maxMentions);
    body.episodes.push({ ...body.episodes[0]!, id: randomUUID(), mentions: rows(1) });
    // Unsigned on purpose: the cap is checked before the signature, so it is what answers.
    await rejects(
      openSnapshot({ ...document, body, signature: 'not.a.signature' }, context(ks)),
      'snapshot_too_large',
      /snapshot\.body\.episodes.*mentions/,
    );
  });

  it('enforces caps on array lengths before verifying anything', async () => {
    const ks = await keyset();
    const document = await sealed(ks);
    await rejects(openSnapshot(document, context(ks, { caps: { ...caps, maxEntities: 1 } })), 'snapshot_too_large', /entities/);
  });

  const broken: [string, (body: SnapshotBody) => void, RegExp][] = [
    ['a dangling fact subject', (b) => void (b.facts[0]!.subject_id = 'nope'), /facts\.0\.subject_id/],
    ['a dangling mention target', (b) => void (b.mentions[0]!.target_id = 'nope'), /mentions\.0\.target/],
    ['a mention of a missing chunk', (b) => void (b.mentions[0]!.chunk = 5), /mentions\.0\.chunk/],
    ['a duplicate entity id', (b) => void (b.entities[1]!.id = 'e1'), /entities\.1\.id/],
    ['a weight that disagrees with the mentions', (b) => void (b.entities[0]!.weight = 3), /entities\.0\.weight/],
    [
      'a NaN chunk vector',
      (b) => void (b.episodes[0]!.chunks[0]!.vector = Buffer.from([0, 0x7e, 0, 0, 0, 0, 0, 0]).toString('base64')),
      /vector/,
    ],
    [
      'an infinite chunk vector',
      (b) => void (b.episodes[0]!.chunks[0]!.vector = Buffer.from([0, 0xfc, 0, 0, 0, 0, 0, 0]).toString('base64')),
      /chunks\.0\.vector/,
    ],
    [
      'a chunk vector of the wrong size',
      (b) => void (b.episodes[0]!.chunks[0]!.vector = Buffer.alloc(6).toString('base64')),
      /chunks\.0\.vector/,
    ],
    ['a chunk vector that is not base64', (b) => void (b.episodes[0]!.chunks[0]!.vector = 'AAAA!AAAAAA='), /chunks\.0\.vector/],
    ['a duplicate provenance row', (b) => void b.mentions.push({ ...b.mentions[0]! }), /episodes\.\d+\.mentions\.\d+$/],
    ['a name vector of the wrong size', (b) => void (b.entities[0]!.name_vector = encodeInt8(new Float32Array(3))), /name_vector/],
    ['a string weight', (b) => void ((b.entities[0] as unknown as Record<string, unknown>).weight = '1'), /entities\.0\.weight/],
  ];
  for (const [name, breakIt, path] of broken) {
    it(`refuses ${name} (validly signed) naming the field`, async () => {
      const ks = await keyset();
      const body = sampleBody();
      breakIt(body);
      const document = await sealed(ks, body);
      await rejects(openSnapshot(document, context(ks)), 'snapshot_invalid', path);
    });
  }

  it('encodes vectors compactly and closely', () => {
    const vector = new Float32Array([0.12345, -0.5, 0.9999, 0.0001]);
    const half = decodeFloat16(encodeFloat16(vector), 4)!;
    const quantised = decodeInt8(encodeInt8(vector), 4)!;
    vector.forEach((value, i) => {
      assert.ok(Math.abs(half[i]! - value) < 1e-3);
      assert.ok(Math.abs(quantised[i]! - value) < 0.01);
    });
    assert.equal(decodeFloat16(encodeFloat16(vector), 5), null, 'a wrong dimension count is refused');
  });
});

/** The sample body's first episode and its mentions `count` times, under new ids, with the weights that gives. */
function repeatedEpisodes(count: number): SnapshotBody {
  const base = sampleBody();
  const body: SnapshotBody = { ...base, episodes: [], mentions: [] };
  for (let i = 0; i < count; i++) {
    const id = randomUUID();
    body.episodes.push({ ...base.episodes[0]!, id });
    for (const mention of base.mentions) body.mentions.push({ ...mention, episode_id: id });
  }
  body.entities = body.entities.map((entity) => ({ ...entity, weight: count }));
  body.facts = body.facts.map((fact) => ({ ...fact, weight: count }));
  return body;
}

describe('opening a large snapshot', () => {
  it('gives the event loop a turn between items while it parses, resolves, checks and flattens the body', async () => {
    const EPISODES = 30;
    const body = repeatedEpisodes(EPISODES);
    const ks = await keyset();
    const slicer = new CountingSlicer();
    const bigCaps = { ...caps, maxEpisodes: EPISODES, maxMentions: 3 * EPISODES };
    const opened = await openSnapshot(await sealed(ks, body), context(ks, { caps: bigCaps, slicer }));
    assert.equal(opened.body.episodes.length, EPISODES);
    assert.equal(opened.body.mentions.length, 3 * EPISODES);
    // Four walks over the episodes (parse, resolve, check, flatten): one turn per episode in each at least.
    assert.ok(slicer.pauses >= 4 * EPISODES, `${slicer.pauses} turns`);
  });
});

describe('opening through the prepared-snapshot cache', () => {
  it('opens a snapshot sent again as prepared: the same checked body, no second parse', async () => {
    const ks = await keyset();
    const cache = new PreparedSnapshotCache(8);
    const document = await sealed(ks);
    const first = await openSnapshot(document, context(ks, { cache }));
    // A fresh copy of the same bytes, as the next request would parse them.
    const again = await openSnapshot(JSON.parse(JSON.stringify(document)) as Record<string, unknown>, context(ks, { cache }));
    assert.equal(again, first);
    assert.deepEqual(cache.stats(), { entries: 1, hits: 1, misses: 1 });
  });

  // Every check before the cache still answers, and nothing changed in the body is served from it.
  const attacks: [
    string,
    (document: Record<string, unknown>, ks: SigningKeyset) => Promise<[Record<string, unknown>, Partial<OpenContext>]>,
    string,
  ][] = [
    ['the same snapshot from another tenant', async (d) => [d, { tenantId: 'tenant-b' }], 'snapshot_tenant_mismatch'],
    [
      'a body changed after it was cached',
      async (d) => [withBody(d, (b) => void (b.entities[0]!.name = 'Mallory')), {}],
      'snapshot_digest_mismatch',
    ],
    [
      'a body cut short after it was cached',
      async (d) => [withBody(d, (b) => editRows(b, (rows) => void rows.pop())), {}],
      'snapshot_digest_mismatch',
    ],
    ['a changed header with the cached digest', async (d) => [{ ...d, graph_id: randomUUID() }, {}], 'snapshot_signature_invalid'],
    [
      "another tenant's own snapshot carrying the cached digest",
      async (d, ks) => {
        const theirs = await sealSnapshot({ graphId: randomUUID(), tenantId: 'tenant-b', embeddingModel: MODEL, body: sampleBody() }, ks);
        const document = JSON.parse(Buffer.concat(theirs.pieces).toString('utf8')) as Record<string, unknown>;
        return [{ ...document, digest: d.digest, body: d.body }, { tenantId: 'tenant-b' }];
      },
      'snapshot_signature_invalid',
    ],
    [
      "the cached snapshot's header and body under another tenant's signature",
      async (d, ks) => [await resign(ks, { ...d, tenant_binding: 'b3RoZXI' }), { tenantId: 'tenant-b' }],
      'snapshot_tenant_mismatch',
    ],
    ['another embedding model', async (d) => [d, { embeddingModel: 'other/model' }], 'snapshot_model_mismatch'],
    ['a key the service no longer holds', async (d) => [d, { keyset: await keyset() }], 'snapshot_signature_invalid'],
  ];
  for (const [name, attack, code] of attacks) {
    it(`refuses ${name} with ${code} while the snapshot is cached`, async () => {
      const ks = await keyset();
      const cache = new PreparedSnapshotCache(8);
      const document = await sealed(ks);
      await openSnapshot(document, context(ks, { cache }));
      const [changed, overrides] = await attack(document, ks);
      await rejects(openSnapshot(changed, context(ks, { cache, ...overrides })), code);
      assert.equal(cache.stats().hits, 0, 'nothing was served from the cache');
    });
  }

  it('opens a body whose keys were reordered (not its canonical bytes) in full, and never serves it prepared', async () => {
    const ks = await keyset();
    const cache = new PreparedSnapshotCache(8);
    const document = await sealed(ks);
    const body = document.body as Record<string, unknown>;
    const reordered = { ...document, body: Object.fromEntries(Object.entries(body).reverse()) };
    const opened = await openSnapshot(reordered, context(ks, { cache }));
    assert.equal(opened.body.entities.length, 2);
    assert.deepEqual(cache.stats(), { entries: 0, hits: 0, misses: 1 }, 'bytes that are not the digested ones are never kept');
    const canonical = await openSnapshot(document, context(ks, { cache }));
    assert.deepEqual(canonical.body, opened.body);
    assert.equal((await openSnapshot(reordered, context(ks, { cache }))) === canonical, false, 'a reordered body is never served prepared');
    assert.equal(await openSnapshot(JSON.parse(JSON.stringify(document)) as Record<string, unknown>, context(ks, { cache })), canonical);
  });

  it('a sealed snapshot kept prepared opens as the same body a full open gives', async () => {
    const ks = await keyset();
    const cache = new PreparedSnapshotCache(8);
    const body = sampleBody();
    const snapshot = await sealSnapshot({ graphId: randomUUID(), tenantId: TENANT, embeddingModel: MODEL, body }, ks);
    const document = JSON.parse(Buffer.concat(snapshot.pieces).toString('utf8')) as Record<string, unknown>;
    const full = await openSnapshot(document, context(ks));
    cache.store(TENANT, openedOf(snapshot));
    const prepared = await openSnapshot(document, context(ks, { cache }));
    assert.equal(cache.stats().hits, 1);
    assert.deepEqual(prepared.body, full.body);
    assert.equal(prepared.bodyBytes, full.bodyBytes);
  });

  it("works out a sealed snapshot's body on its next open, an episode per turn, not when it is kept", async () => {
    const ks = await keyset();
    const EPISODES = 6;
    const body = repeatedEpisodes(EPISODES);
    const snapshot = await sealSnapshot({ graphId: randomUUID(), tenantId: TENANT, embeddingModel: MODEL, body }, ks);
    const document = JSON.parse(Buffer.concat(snapshot.pieces).toString('utf8')) as Record<string, unknown>;
    const cache = new PreparedSnapshotCache(8, {
      admitResident: () => true,
      touchResident: () => undefined,
      resizeResident: () => true,
      removeResident: () => undefined,
    });
    const kept = openedOf(snapshot);
    let bodyReads = 0;
    const readBody = Object.getOwnPropertyDescriptor(kept, 'body')!.get!;
    Object.defineProperty(kept, 'body', {
      get: () => {
        bodyReads += 1;
        return readBody.call(kept) as SnapshotBody;
      },
    });
    cache.store(TENANT, kept);
    assert.equal(bodyReads, 0, 'keeping it (its bytes counted in the budget) does not work out its body');
    const slicer = new CountingSlicer();
    const prepared = await openSnapshot(document, context(ks, { cache, slicer }));
    assert.equal(cache.stats().hits, 1);
    assert.ok(slicer.pauses >= 2 * EPISODES, `${slicer.pauses} turns (resolve and flatten, an episode each)`);
    assert.deepEqual(prepared.body, (await openSnapshot(document, context(ks))).body);
  });
});

describe('opening with the digest of the body text worked out on a worker thread', () => {
  it('serves a prepared snapshot on the digest alone, and opens in full on the digest sent', async () => {
    const ks = await keyset();
    const snapshot = await sealSnapshot({ graphId: randomUUID(), tenantId: TENANT, embeddingModel: MODEL, body: sampleBody() }, ks);
    const document = JSON.parse(Buffer.concat(snapshot.pieces).toString('utf8')) as Record<string, unknown>;
    const sent = jsonTextDigest(document.body);
    const full = await openSnapshot(document, context(ks), 'snapshot', sent);
    assert.equal(full.bodyBytes, sent.bytes);

    const cache = new PreparedSnapshotCache(8);
    const kept = openedOf(snapshot);
    Object.defineProperty(kept, 'bodySent', {
      get: () => {
        throw new Error('the held body was walked');
      },
    });
    cache.store(TENANT, kept);
    const prepared = await openSnapshot(document, context(ks, { cache }), 'snapshot', sent);
    assert.equal(cache.stats().hits, 1, 'served prepared without walking either body');
    assert.deepEqual(prepared.body, full.body);

    // A changed body with its own text's digest: not the signed one, so it is opened in full and refused.
    const changed = withBody(document, (body) => {
      body.entities[0]!.name = 'Changed';
    });
    await assert.rejects(
      openSnapshot(changed, context(ks, { cache }), 'snapshot', jsonTextDigest(changed.body)),
      (error: unknown) => error instanceof SnapshotError && error.code === 'snapshot_digest_mismatch',
    );
    assert.equal(cache.stats().hits, 1);
  });
});

describe('sameJsonText (what counts as a body sent again)', () => {
  // Each pair as two JSON texts, parsed: the same text must match, any other must not.
  const cases: [string, string, boolean][] = [
    ['{"a":[1,{"b":"x"}],"c":null}', '{"a":[1,{"b":"x"}],"c":null}', true],
    ['{"a":1.0,"s":"\u0041"}', '{"a":1,"s":"A"}', true], // the same JSON.stringify text
    ['{"a":1,"b":2}', '{"b":2,"a":1}', false], // keys reordered: another text
    ['{"a":1}', '{"a":1,"b":2}', false],
    ['{"a":1,"b":2}', '{"a":1}', false],
    ['{"a":1,"b":2}', '{"a":1,"c":2}', false],
    ['{"a":[1,2]}', '{"a":[1,2,3]}', false],
    ['{"a":[1,2]}', '{"a":[2,1]}', false],
    ['{"a":"1"}', '{"a":1}', false],
    ['{"a":0}', '{"a":false}', false],
    ['{"a":""}', '{"a":null}', false],
    ['{"a":null}', '{"a":{}}', false],
    ['{"a":[]}', '{"a":{}}', false],
    ['{"a":{"0":1}}', '{"a":[1]}', false],
    ['{"e":[{"chunks":[{"text":"Ada"}]}]}', '{"e":[{"chunks":[{"text":"Adb"}]}]}', false],
    ['{"__proto__":{"x":1}}', '{"__proto__":{"x":2}}', false],
  ];
  for (const [a, b, same] of cases) {
    it(`${a} and ${b}: ${same ? 'the same' : 'not the same'}`, () => {
      assert.equal(sameJsonText(JSON.parse(a), JSON.parse(b)), same);
      assert.equal(sameJsonText(JSON.parse(b), JSON.parse(a)), same);
      assert.equal(same, JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b)), 'agrees with comparing the texts');
    });
  }
});

/** An episode's mention rows, decoded (2.0 sends them as one string). */
function rowsOf(body: WireBody, episode = 0): WireMention[] {
  const decoded = decodeMentions(body.episodes[episode]!.mentions, true);
  assert.ok('rows' in decoded, JSON.stringify(decoded));
  return decoded.rows;
}

function editRows(body: WireBody, change: (rows: WireMention[]) => void, episode = 0): void {
  const rows = rowsOf(body, episode);
  change(rows);
  body.episodes[episode]!.mentions = encodeMentions(rows);
}

function withBody(document: Record<string, unknown>, change: (body: WireBody) => void): Record<string, unknown> {
  const body = structuredClone(document.body) as WireBody;
  change(body);
  return { ...document, body };
}

describe('opening bytes sent before (found by their digest, not parsed again)', () => {
  const SPAN = `sha256:${'ab'.repeat(32)}`;

  it('remembers the bytes a snapshot opened from, and a call carrying them opens it prepared', async () => {
    const ks = await keyset();
    const cache = new PreparedSnapshotCache(8);
    const first = await openSnapshot(await sealed(ks), context(ks, { cache }), 'snapshot', undefined, SPAN);
    const found = cache.bySpan(TENANT, SPAN);
    assert.equal(found, first);
    assert.equal(await openPrepared(found!, context(ks, { cache })), first);
  });

  it('remembers nothing for bytes whose header differs from the one held (the same body under another header)', async () => {
    const ks = await keyset();
    const cache = new PreparedSnapshotCache(8);
    const body = sampleBody();
    await openSnapshot(await sealed(ks, body), context(ks, { cache }));
    // The same body sealed again: another graph id and signature, the same digest, served prepared.
    const other = await sealed(ks, body);
    await openSnapshot(other, context(ks, { cache }), 'snapshot', undefined, SPAN);
    assert.equal(cache.bySpan(TENANT, SPAN), null, 'the held entry carries the first header');
  });

  // What may have changed since the bytes were opened is checked again on every call.
  const changes: [name: string, overrides: (ks: SigningKeyset) => Promise<Partial<OpenContext>>, code: string][] = [
    ['its key retired from the keyset', async () => ({ keyset: await keyset() }), 'snapshot_signature_invalid'],
    ['another tenant (never found by bytes, refused if handed over)', async () => ({ tenantId: 'tenant-b' }), 'snapshot_tenant_mismatch'],
    ['another embedding model', async () => ({ embeddingModel: 'other/model' }), 'snapshot_model_mismatch'],
  ];
  for (const [name, overrides, code] of changes) {
    it(`refuses a prepared snapshot with ${name}: ${code}`, async () => {
      const ks = await keyset();
      const cache = new PreparedSnapshotCache(8);
      const first = await openSnapshot(await sealed(ks), context(ks, { cache }), 'snapshot', undefined, SPAN);
      await rejects(openPrepared(first, context(ks, { cache, ...(await overrides(ks)) })), code);
    });
  }

  it('a snapshot this service sealed (a device create kept it) is remembered by the bytes it comes back as, and checked alike', async () => {
    const ks = await keyset();
    const cache = new PreparedSnapshotCache(8);
    const snapshot = await sealSnapshot({ graphId: randomUUID(), tenantId: TENANT, embeddingModel: MODEL, body: sampleBody() }, ks);
    const kept = openedOf(snapshot);
    cache.store(TENANT, kept);
    const sent = JSON.parse(Buffer.concat(snapshot.pieces).toString('utf8')) as Record<string, unknown>;
    assert.equal(await openSnapshot(sent, context(ks, { cache }), 'snapshot', undefined, SPAN), kept);
    assert.equal(cache.bySpan(TENANT, SPAN), kept);
    assert.equal(await openPrepared(kept, context(ks, { cache })), kept);
    await rejects(openPrepared(kept, context(await keyset(), { cache })), 'snapshot_signature_invalid');
  });
});

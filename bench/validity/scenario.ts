/**
 * The validity bench (BENCH_ONLY=validity): facts that change over time, on generated life
 * histories with known answers. Each person changes employer, city and role several times; each
 * change is one memory with its own time (occurred_at). Distractors must not supersede anything:
 * visits to other cities, things they like, and restatements of the current employer.
 *
 * Ingestion runs the code the structure stage runs (the local extractor, the graph builder's
 * resolution and writes, validity rows, newSupersessions) into an in-memory graph (the device
 * snapshot's GraphStore) feeding a search partition, so no stack is needed; name embeddings are a
 * deterministic stand-in (no two generated names merge by similarity). Printed:
 *   validity_supersession_precision / _recall   detected supersessions against the planted changes
 *   validity_current_top_share_off / _on        "current X of Y" questions ("Where does P work?",
 *                                               "Where does P live?", "What is P's role?") whose top
 *                                               relationship is P's current X: without and with the
 *                                               search validity step, on the same graph
 *   validity_roles_ended_with_employer_share    people whose last role was held at an employer they
 *                                               left since: the role is not answered as current
 *                                               (a role ends with its employment; such a role is
 *                                               also not "superseded" by the next one)
 *   validity_ingest_cpu_ms_per_memory_off / _on structure-stage CPU per memory (extraction,
 *                                               resolution, graph writes; with validity: the rows'
 *                                               validity and the supersession replay), one process
 * The store's part of the supersession check (one read of the subject's facts and rows per
 * collection) is not in the CPU figure.
 *
 * A second generated set checks what ends a fact without replacing it, and capacities:
 *   validity_ending_share        planted endings ("left X", "no longer works at X", "no longer
 *                                lives in X", "ticket T-n was closed") after which the ended fact
 *                                no longer holds
 *   validity_false_ending_share  facts that must still hold (other people's employers, tickets
 *                                never closed) that read as no longer holding
 *   validity_capacity_role_share "P joined X as ROLE": the role current afterwards
 */
import { DEFAULT_FACT_LEXICON, PredicateClassifier } from '../../core/fact-lexicon.js';
import { factTimelines, newSupersessions, validityAt } from '../../core/fact-timeline.js';
import type { EntityCandidate, GraphStore } from '../../core/graph-store.js';
import type { GraphScope, NewEntity, NewFact, NewMention } from '../../core/graph-model.js';
import { seededRandom } from '../../core/random.js';
import { extractChunks, GraphBuilder } from '../../activities/graph-builder.js';
import { normalizeEntityName } from '../../extractors/structure/normalize.js';
import { createLocalExtractor } from '../../extractors/structure/local-extractor.js';
import type { Embedder } from '../../models/embedder.js';
import { GraphPartition, type GraphEntityInfo, type GraphFactInfo, type ProvenanceRow } from '../../search/graph-index.js';
import { matchGraph } from '../../search/graph-match.js';
import { applyValidity } from '../../services/fact-validity.js';
import { graphSignal, visibleGraph } from '../../services/graph-search.js';
import { SnapshotGraph } from '../../snapshot/snapshot-graph.js';
import { info, metric } from '../stats.js';

const PEOPLE = 40;
const FIRST = [
  'Maria',
  'James',
  'Aisha',
  'Kenji',
  'Olga',
  'Pedro',
  'Fatima',
  'Liam',
  'Mei',
  'Sofia',
  'Noah',
  'Priya',
  'Lars',
  'Amara',
  'Diego',
  'Yuki',
  'Elena',
  'Omar',
  'Ingrid',
  'Tariq',
];
const LAST = [
  'Lopez',
  'Novak',
  'Okafor',
  'Tanaka',
  'Petrova',
  'Silva',
  'Haddad',
  'Murphy',
  'Wei',
  'Rossi',
  'Becker',
  'Sharma',
  'Nilsson',
  'Mensah',
  'Ortega',
  'Sato',
  'Ivanova',
  'Farouk',
  'Berg',
  'Aziz',
];
const ORGS = [
  'Northwind Traders',
  'Contoso',
  'Fabrikam',
  'Globex',
  'Initech',
  'Hooli',
  'Vandelay Industries',
  'Cyberdyne',
  'Tyrell Systems',
  'Aperture Science',
  'Wonka Industries',
  'Soylent',
];
const CITIES = [
  'Madrid',
  'Porto',
  'Vienna',
  'Lisbon',
  'Berlin',
  'Oslo',
  'Prague',
  'Dublin',
  'Warsaw',
  'Zurich',
  'Milan',
  'Lyon',
  'Athens',
  'Helsinki',
];
const ROLES = [
  'CTO',
  'VP of Sales',
  'Director of Marketing',
  'Engineering Manager',
  'Senior Engineer',
  'Head of Product',
  'Lead Designer',
  'Chief Operating Officer',
];
const LIKES = ['jazz', 'chess', 'hiking', 'sushi', 'sailing', 'poetry'];

type ClassName = 'employer' | 'residence' | 'role';
const TEMPLATES: Record<ClassName, string[]> = {
  employer: ['{p} works at {x}.', '{p} joined {x}.', '{p} started at {x}.'],
  residence: ['{p} lives in {x}.', '{p} moved to {x}.', '{p} relocated to {x}.'],
  role: ['{p} became {x}.', '{p} was promoted to {x}.'],
};
const POOLS: Record<ClassName, string[]> = { employer: ORGS, residence: CITIES, role: ROLES };
const QUESTIONS: Record<ClassName, string> = {
  employer: 'Where does {p} work?',
  residence: 'Where does {p} live?',
  role: "What is {p}'s role?",
};

interface BenchMemory {
  text: string;
  time: Date;
}

interface Person {
  name: string;
  /** The objects of each class in time order: the last is current (a role: unless `roleEnded`). */
  history: Record<ClassName, string[]>;
  /** The last role ended with the employer it was held at (the lexicon's endsWith). */
  roleEnded: boolean;
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const fill = (template: string, person: string, value: string) => template.replace('{p}', person).replace('{x}', value);

function generate(seed: number): { people: Person[]; memories: BenchMemory[]; planted: Set<string> } {
  const random = seededRandom(seed);
  const people: Person[] = [];
  const memories: BenchMemory[] = [];
  const planted = new Set<string>();
  for (let index = 0; people.length < PEOPLE; index += 1) {
    const name = `${FIRST[index % FIRST.length]} ${LAST[(index * 7 + Math.floor(index / LAST.length)) % LAST.length]}`;
    if (people.some((person) => person.name === name)) continue;
    const person: Person = { name, history: { employer: [], residence: [], role: [] }, roleEnded: false };
    /** Index in the employer history of the employer the current role is held at (null: none known then). */
    let roleHeldAt: number | null = null;
    let day = Date.UTC(2015, 0, 1) + Math.floor(random() * 365) * 86_400_000;
    const changes: ClassName[] = [];
    for (const [className, count] of [
      ['employer', 3 + Math.floor(random() * 2)],
      ['residence', 2 + Math.floor(random() * 2)],
      ['role', 2 + Math.floor(random() * 2)],
    ] as [ClassName, number][]) {
      for (let n = 0; n < count; n += 1) changes.push(className);
    }
    changes.sort(() => random() - 0.5);
    const emit = (text: string) => {
      day += (60 + Math.floor(random() * 340)) * 86_400_000;
      memories.push({ text, time: new Date(day) });
    };
    for (const className of changes) {
      const history = person.history[className];
      let value = pick(random, POOLS[className]);
      while (value === history[history.length - 1]) value = pick(random, POOLS[className]);
      const previous = history[history.length - 1];
      // A role that ended with its employer is not superseded by the next one.
      if (previous !== undefined && !(className === 'role' && person.roleEnded)) planted.add(key(name, className, previous, value));
      history.push(value);
      if (className === 'role') {
        person.roleEnded = false;
        roleHeldAt = person.history.employer.length > 0 ? person.history.employer.length - 1 : null;
      } else if (className === 'employer' && roleHeldAt === history.length - 2 && !person.roleEnded) person.roleEnded = true;
      emit(fill(pick(random, TEMPLATES[className]), name, value));
      // Distractors between changes: none of them may supersede anything.
      const roll = random();
      if (roll < 0.25)
        emit(
          `${name} visited ${pick(
            random,
            CITIES.filter((city) => !person.history.residence.includes(city)),
          )}.`,
        );
      else if (roll < 0.4) emit(`${name} likes ${pick(random, LIKES)}.`);
      else if (roll < 0.55 && person.history.employer.length > 0) emit(`${name} works at ${person.history.employer.at(-1)!}.`);
    }
    people.push(person);
  }
  memories.sort((a, b) => a.time.getTime() - b.time.getTime());
  return { people, memories, planted };
}

const key = (person: string, className: string, from: string, to: string): string =>
  [person, className, from, to].map((part) => normalizeEntityName(part)).join(' | ');

/** Deterministic unit vectors per name: resolution runs, and no two generated names are alike. */
const standInEmbedder: Embedder = {
  modelId: 'bench-stand-in',
  dimensions: 64,
  embedPassages: (texts) =>
    Promise.resolve(
      texts.map((text) => {
        const random = seededRandom([...text].reduce((hash, char) => Math.imul(hash ^ char.charCodeAt(0), 16_777_619), 2_166_136_261));
        const vector = Float32Array.from({ length: 64 }, () => random() - 0.5);
        const norm = Math.hypot(...vector);
        return vector.map((value) => value / norm);
      }),
    ),
  embedQuery: (text) => standInEmbedder.embedPassages([text]).then(([vector]) => vector!),
};

/** The snapshot's GraphStore, mirrored into a search partition as each memory is written. */
class PartitionedGraph implements GraphStore {
  readonly partition = new GraphPartition();
  readonly entities = new Map<string, GraphEntityInfo>();
  private readonly facts = new Map<string, GraphFactInfo>();
  private readonly inner = new SnapshotGraph({ episodes: [], entities: [], facts: [], mentions: [] }, standInEmbedder.dimensions);

  findByKeys(scope: GraphScope, keys: string[]): Promise<EntityCandidate[]> {
    return this.inner.findByKeys(scope, keys);
  }

  findCandidates(scope: GraphScope, keys: string[], limit: number): Promise<EntityCandidate[]> {
    return this.inner.findCandidates(scope, keys, limit);
  }

  async write(scope: GraphScope, entities: NewEntity[], facts: NewFact[], mentions: NewMention[]): Promise<void> {
    await this.inner.write(scope, entities, facts, mentions);
    for (const entity of entities) {
      const known = this.entities.get(entity.id);
      this.entities.set(entity.id, {
        id: entity.id,
        name: known?.name ?? entity.name,
        category: known?.category ?? entity.category,
        description: known?.description ?? entity.description,
        aliasKeys: [...new Set([...(known?.aliasKeys ?? []), ...entity.aliasKeys])],
      });
    }
    for (const fact of facts) if (!this.facts.has(fact.id)) this.facts.set(fact.id, fact);
    const rows = new Map<string, ProvenanceRow[]>();
    for (const mention of mentions) {
      const list = rows.get(mention.memoryId) ?? [];
      list.push({
        targetId: mention.targetId,
        chunkIndex: mention.chunkIndex,
        count: mention.count,
        description: mention.description,
        ...(mention.validFrom !== undefined ? { validFrom: mention.validFrom, validTo: mention.validTo ?? null } : {}),
      });
      rows.set(mention.memoryId, list);
    }
    for (const [memoryId, list] of rows) this.partition.setMemory(memoryId, list, this.entities, this.facts);
  }
}

async function ingest(memories: BenchMemory[], classifier: PredicateClassifier | null) {
  const graph = new PartitionedGraph();
  const extractor = createLocalExtractor();
  const builder = new GraphBuilder({ graph, extractor, embedder: standInEmbedder, similarityThreshold: 0.93, classifier });
  const scope = { tenantId: 'bench', collectionId: 'validity' };
  const detected = new Set<string>();
  const started = process.cpuUsage();
  for (const [index, memory] of memories.entries()) {
    const memoryId = `m${index}`;
    const chunks = [{ index: 0, text: memory.text, source: { type: 'text' as const, start: 0, end: memory.text.length } }];
    const extractions = await extractChunks(
      extractor,
      chunks,
      () => undefined,
      () => memory.time,
    );
    const written = await builder.writeToCollection(scope, memoryId, extractions);
    if (!classifier) continue;
    for (const subjectId of written.subjectIds) {
      const facts = graph.partition.timelineFactsOf(subjectId);
      const byId = new Map(facts.map((fact) => [fact.id, fact]));
      for (const change of newSupersessions(facts, memoryId, classifier)) {
        const name = (id: string | undefined) => (id === undefined ? '?' : (graph.entities.get(id)?.name ?? '?'));
        const old = byId.get(change.oldFactId);
        detected.add(key(name(old?.subjectId), change.className, name(old?.objectId), name(byId.get(change.newFactId)?.objectId)));
      }
    }
  }
  const cpu = process.cpuUsage(started);
  return { graph, detected, cpuMsPerMemory: (cpu.user + cpu.system) / 1000 / memories.length };
}

export async function validityScenario(): Promise<void> {
  const { people, memories, planted } = generate(29);
  const classifier = new PredicateClassifier(DEFAULT_FACT_LEXICON);
  info(`   ${people.length} people, ${memories.length} memories, ${planted.size} planted supersessions`);
  // Warm the extractor (compromise's first parses are slow), then off and on alternately, three
  // times each: the median CPU per memory of each.
  await ingest(memories.slice(0, 100), classifier);
  const cpu = { off: [] as number[], on: [] as number[] };
  let on = await ingest(memories, classifier);
  for (let round = 0; round < 3; round += 1) {
    cpu.off.push((await ingest(memories, null)).cpuMsPerMemory);
    on = await ingest(memories, classifier);
    cpu.on.push(on.cpuMsPerMemory);
  }
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

  const correct = [...on.detected].filter((found) => planted.has(found)).length;
  const examples = (items: string[]) => items.slice(0, 3).join('; ') || 'none';
  info(`   missed: ${examples([...planted].filter((change) => !on.detected.has(change)))}`);
  info(`   not planted: ${examples([...on.detected].filter((change) => !planted.has(change)))}`);
  metric('validity_planted_supersessions', planted.size, 'count');
  metric('validity_detected_supersessions', on.detected.size, 'count');
  metric('validity_supersession_precision', on.detected.size === 0 ? 0 : correct / on.detected.size, 'ratio');
  metric('validity_supersession_recall', correct / planted.size, 'ratio');

  const extractor = createLocalExtractor();
  const { partition, entities } = on.graph;
  const now = new Date();
  let asked = 0;
  const right = { off: 0, on: 0 };
  const endedRoles = { asked: 0, notCurrent: 0 };
  for (const person of people) {
    for (const className of Object.keys(QUESTIONS) as ClassName[]) {
      const current = person.history[className].at(-1);
      if (current === undefined) continue;
      if (className === 'role' && person.roleEnded) {
        // No current role: the last one ended with its employer. It must not be answered as current.
        const query = QUESTIONS.role.replace('{p}', person.name);
        const signal = visibleGraph(await graphSignal((keys) => matchGraph([partition], keys), extractor, query), () => true);
        const timelines = partition.timelines(
          signal.relationships.map((relationship) => relationship.id),
          classifier,
        );
        const shown = applyValidity(signal, timelines, query, classifier, { asOf: null, includeHistory: false }, now).relationships;
        endedRoles.asked += 1;
        if (
          !shown.some(
            (relationship) => normalizeEntityName(entities.get(relationship.object_id)?.name ?? '') === normalizeEntityName(current),
          )
        )
          endedRoles.notCurrent += 1;
        continue;
      }
      const query = QUESTIONS[className].replace('{p}', person.name);
      const signal = visibleGraph(await graphSignal((keys) => matchGraph([partition], keys), extractor, query), () => true);
      const timelines = partition.timelines(
        signal.relationships.map((relationship) => relationship.id),
        classifier,
      );
      const ranked = applyValidity(signal, timelines, query, classifier, { asOf: null, includeHistory: false }, now).relationships;
      const isCurrent = (top: { subject_id: string; object_id: string } | undefined): boolean =>
        top !== undefined &&
        normalizeEntityName(entities.get(top.subject_id)?.name ?? '') === normalizeEntityName(person.name) &&
        normalizeEntityName(entities.get(top.object_id)?.name ?? '') === normalizeEntityName(current);
      asked += 1;
      if (isCurrent(signal.relationships[0])) right.off += 1;
      if (isCurrent(ranked[0])) right.on += 1;
    }
  }
  metric('validity_roles_ended_with_employer', endedRoles.asked, 'count');
  metric('validity_roles_ended_with_employer_share', endedRoles.asked === 0 ? 0 : endedRoles.notCurrent / endedRoles.asked, 'ratio');
  metric('validity_current_questions', asked, 'count');
  metric('validity_current_top_share_off', right.off / asked, 'ratio');
  metric('validity_current_top_share_on', right.on / asked, 'ratio');
  metric('validity_ingest_cpu_ms_per_memory_off', median(cpu.off), 'ms');
  metric('validity_ingest_cpu_ms_per_memory_on', median(cpu.on), 'ms');
  metric('validity_ingest_cpu_ratio_on_off', median(cpu.on) / median(cpu.off), 'ratio');
  await endingsScenario(classifier);
}

interface EndingCheck {
  subject: string;
  className: string;
  object: string;
  /** true: the fact must no longer hold; false: it must still hold. */
  ended: boolean;
}

/** People who leave employers and cities, tickets opened and closed, and capacities. */
function generateEndings(seed: number): { memories: BenchMemory[]; checks: EndingCheck[] } {
  const random = seededRandom(seed);
  const memories: BenchMemory[] = [];
  const checks: EndingCheck[] = [];
  let day = Date.UTC(2020, 0, 1);
  const emit = (text: string) => {
    day += (5 + Math.floor(random() * 30)) * 86_400_000;
    memories.push({ text, time: new Date(day) });
  };
  const leaving = ['{p} left {x}.', '{p} no longer works at {x}.', '{p} quit {x}.', '{p} resigned from {x}.'];
  const moving = ['{p} no longer lives in {x}.', '{p} moved out of {x}.', "{p} doesn't live in {x} anymore."];
  const names = new Set<string>();
  for (let index = 0; names.size < 30; index += 1) {
    const name = `${FIRST[(index * 3) % FIRST.length]} ${LAST[(index * 11 + Math.floor(index / FIRST.length) + 5) % LAST.length]}`;
    if (names.has(name)) continue;
    names.add(name);
    const employer = pick(random, ORGS);
    const city = pick(random, CITIES);
    emit(fill(pick(random, TEMPLATES.employer), name, employer));
    emit(fill(pick(random, TEMPLATES.residence), name, city));
    const role = pick(random, ROLES);
    emit(
      `${name} joined ${pick(
        random,
        ORGS.filter((org) => org !== employer),
      )} as ${role}.`,
    );
    checks.push({ subject: name, className: 'role', object: role, ended: false });
    if (random() < 0.5) {
      emit(fill(pick(random, leaving), name, employer));
      checks.push({ subject: name, className: 'employer', object: employer, ended: true });
    }
    if (random() < 0.5) {
      emit(fill(pick(random, moving), name, city));
      checks.push({ subject: name, className: 'residence', object: city, ended: true });
    } else {
      // Distractor: a visit to another city ends nothing.
      emit(
        `${name} visited ${pick(
          random,
          CITIES.filter((other) => other !== city),
        )}.`,
      );
      checks.push({ subject: name, className: 'residence', object: city, ended: false });
    }
    const ticket = `Ticket T-${1000 + names.size}`;
    emit(`${ticket} is open.`);
    const closed = random() < 0.5;
    emit(closed ? `${ticket} was ${pick(random, ['closed', 'resolved', 'cancelled'])}.` : `${ticket} was reviewed by ${name}.`);
    checks.push({ subject: ticket, className: 'status', object: 'open', ended: closed });
  }
  memories.sort((a, b) => a.time.getTime() - b.time.getTime());
  return { memories, checks };
}

async function endingsScenario(classifier: PredicateClassifier): Promise<void> {
  const { memories, checks } = generateEndings(30);
  const { graph } = await ingest(memories, classifier);
  const idOf = new Map([...graph.entities.values()].map((entity) => [normalizeEntityName(entity.name), entity.id]));
  // After the last memory (generated times run past today).
  const end = new Date(memories.at(-1)!.time.getTime() + 86_400_000);
  /** Whether a fact of the class from the subject to the object holds at the end (null: no such fact). */
  const holds = (check: EndingCheck): boolean | null => {
    const subjectId = idOf.get(normalizeEntityName(check.subject));
    if (subjectId === undefined) return null;
    const facts = graph.partition.timelineFactsOf(subjectId);
    const timelines = factTimelines(facts, classifier);
    const objectKey = normalizeEntityName(check.object);
    const matching = facts.filter(
      (fact) =>
        normalizeEntityName(graph.entities.get(fact.objectId)?.name ?? '') === objectKey &&
        timelines.get(fact.id)?.className === check.className,
    );
    if (matching.length === 0) return null;
    return matching.some((fact) => validityAt(timelines.get(fact.id)!, end).status === 'current');
  };
  const share = (selected: EndingCheck[], right: (check: EndingCheck) => boolean): number =>
    selected.length === 0 ? 0 : selected.filter(right).length / selected.length;
  const endings = checks.filter((check) => check.ended);
  const standing = checks.filter((check) => !check.ended && check.className !== 'role');
  const roles = checks.filter((check) => check.className === 'role');
  const wrong = endings.filter((check) => holds(check) !== false).map((check) => `${check.subject} ${check.className} ${check.object}`);
  const falseEndings = standing
    .filter((check) => holds(check) === false)
    .map((check) => `${check.subject} ${check.className} ${check.object}`);
  const lostRoles = roles.filter((check) => holds(check) !== true).map((check) => `${check.subject} ${check.object}`);
  info(`   ${memories.length} memories; endings still holding or unread: ${wrong.slice(0, 3).join('; ') || 'none'}`);
  info(
    `   read as ended: ${falseEndings.slice(0, 3).join('; ') || 'none'}; roles not current: ${lostRoles.slice(0, 3).join('; ') || 'none'}`,
  );
  metric('validity_planted_endings', endings.length, 'count');
  metric(
    'validity_ending_share',
    share(endings, (check) => holds(check) === false),
    'ratio',
  );
  metric(
    'validity_false_ending_share',
    share(standing, (check) => holds(check) === false),
    'ratio',
  );
  metric(
    'validity_capacity_role_share',
    share(roles, (check) => holds(check) === true),
    'ratio',
  );
}

/**
 * A deterministic conversational-memory corpus for the retrieval benchmark.
 *
 * ~80 conversations of 12–20 alternating user/assistant turns, one user each (the user introduces
 * themselves by name in the first turn). Each conversation mixes small talk and topic chatter
 * with 2–4 planted facts carrying specific values: names of people, pets, companies and places,
 * amounts, dates and identifiers (order, flight, booking, ticket numbers, number plates).
 *
 * What makes it hard on purpose:
 *   - every fact type recurs across many conversations with other values (many users have a
 *     pet, a trip, an order...), so a question only has one right turn among many look-alikes;
 *   - decoy turns state the same kind of fact about someone else (a neighbour's dog, a
 *     brother's flight), sometimes in the same conversation as the real one;
 *   - filler turns and assistant replies share the topic vocabulary without the values;
 *   - evidence turns rarely name the user (only the intro does, plus an occasional "Priya
 *     here again"), so a question about "Priya's dog" must be matched on content, or linked to
 *     the conversation some other way (graph, lexical hit on the name elsewhere in it);
 *   - questions are phrased with several templates per fact, mostly in other words than the
 *     evidence turn ("dog" vs "beagle puppy", "medicine" vs "put me on").
 *
 * Question kinds:
 *   paraphrase — asks about the user's fact in different words than the evidence turn;
 *   exact      — hinges on an identifier, number or rare name (order ZX-4471, flight LH 1838);
 *   entity     — names a person / pet / place / organisation from the conversation and asks about
 *                a related fact, sometimes stated in another turn than the name (two evidence turns);
 *   temporal   — asks when (dates, days), evidence is the turn stating it;
 *   update     — a value changed later in the conversation (rescheduled flight, moved deadline):
 *                the evidence is only the turn with the current value, the stale one is a distractor.
 *
 * Questions are split into `tune` and `test` halves, per kind, by a hash of their id (so each half
 * has the same mix of kinds): fusion weights are tuned on `tune`, headline figures come from `test`.
 */
import { FACT_TYPES } from './facts/index.js';
import { type Ctx, type Fact, type FactType } from './facts/model.js';
import { CHATTER, DECOYS, HOOKS, INTROS, INTRO_REPLIES, SELF_MENTIONS, SMALL_TALK, reply } from './filler.js';
import { FIRST_NAMES, LAST_NAMES } from './pools.js';
import { type Rng, Unique, chance, int, pick, shuffled } from './random.js';
import { seededRandom } from '../texts.js';

export const DEFAULT_SEED = 20_240_611;
export const DEFAULT_CONVERSATIONS = 80;

export const TOPICS = ['travel', 'work', 'pets', 'health', 'money', 'hobbies', 'family', 'home', 'cars', 'food'] as const;
export type Topic = (typeof TOPICS)[number];

export const QUESTION_KINDS = ['paraphrase', 'exact', 'entity', 'temporal', 'update'] as const;
export type QuestionKind = (typeof QUESTION_KINDS)[number];

export type Split = 'tune' | 'test';

export interface Message {
  role: 'user' | 'assistant';
  content: string;
}

export interface Conversation {
  index: number;
  /** The user's full name, as they introduce themselves in message 0. */
  user: string;
  firstName: string;
  /** Planted fact types, in the order they were drawn. */
  facts: string[];
  messages: Message[];
}

export interface EvidenceTurn {
  conversation: number;
  message: number;
}

export interface Question {
  /** Stable id: conversation index and fact type (unique: a conversation has each type once). */
  id: string;
  kind: QuestionKind;
  split: Split;
  text: string;
  /** The value the evidence states (a substring of one evidence turn): for reading results only. */
  answer: string;
  fact: string;
  conversation: number;
  evidence: EvidenceTurn[];
  /**
   * Whether an evidence turn names the user. Most do not (people rarely repeat their own name),
   * so for most questions the "Priya's" part can only be matched elsewhere in the conversation.
   */
  namesUser: boolean;
}

export interface Corpus {
  seed: number;
  conversations: Conversation[];
  questions: Question[];
}

// ---------------------------------------------------------------------------------------------
// Assembly

/** Target share of each question kind; each fact's question takes the kind furthest below its share. */
const KIND_TARGETS: Record<QuestionKind, number> = { paraphrase: 0.3, exact: 0.22, entity: 0.25, temporal: 0.13, update: 0.1 };

/** FNV-1a (32-bit) of a string. */
export function hashId(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * Splits questions into tune / test halves, stratified by kind: within each kind, questions are
 * ordered by the hash of their id and alternately assigned, so both halves have (±1) the same mix.
 */
export function assignSplits(questions: Question[]): void {
  for (const kind of QUESTION_KINDS) {
    const ofKind = questions.filter((q) => q.kind === kind).sort((a, b) => hashId(a.id) - hashId(b.id) || a.id.localeCompare(b.id));
    ofKind.forEach((q, i) => {
      q.split = i % 2 === 0 ? 'test' : 'tune';
    });
  }
}

function drawFactType(r: Rng, exclude: Set<string>): FactType {
  const candidates = FACT_TYPES.filter((t) => !exclude.has(t.type));
  const total = candidates.reduce((sum, t) => sum + t.weight, 0);
  let x = r() * total;
  for (const t of candidates) {
    x -= t.weight;
    if (x < 0) return t;
  }
  return candidates[candidates.length - 1]!;
}

type Slot = { kind: 'fact'; fact: number; turn: number } | { kind: 'filler'; text: string; topic: Topic | null };

export function generateCorpus(options: { seed?: number; conversations?: number } = {}): Corpus {
  const seed = options.seed ?? DEFAULT_SEED;
  const count = options.conversations ?? DEFAULT_CONVERSATIONS;
  const r = seededRandom(seed);
  const u = new Unique();
  const kindCounts: Record<QuestionKind, number> = { paraphrase: 0, exact: 0, entity: 0, temporal: 0, update: 0 };
  const conversations: Conversation[] = [];
  const questions: Question[] = [];

  for (let index = 0; index < count; index++) {
    const first = u.from(r, FIRST_NAMES);
    const full = `${first} ${pick(r, LAST_NAMES)}`;
    const ctx: Ctx = { r, u, first };
    const messageCount = 2 * int(r, 6, 10); // 12..20, user first, alternating
    const userSlots = messageCount / 2 - 1; // after the intro
    const wanted = chance(r, 0.5) ? 2 : chance(r, 0.8) ? 3 : 4;

    // Facts: distinct types, leaving at least one filler slot.
    const facts: Fact[] = [];
    const types = new Set<string>();
    let factTurns = 0;
    for (let attempt = 0; attempt < 30 && facts.length < wanted; attempt++) {
      const type = drawFactType(r, types);
      const fact = type.make(ctx);
      if (factTurns + fact.turns.length > userSlots - 1) continue;
      facts.push(fact);
      types.add(type.type);
      factTurns += fact.turns.length;
    }

    // Fact turns at random slots, each fact's turns in order, facts interleaved.
    const slots: (Slot | null)[] = Array.from({ length: userSlots }, () => null);
    const positions = shuffled(
      r,
      Array.from({ length: userSlots }, (_, i) => i),
    )
      .slice(0, factTurns)
      .sort((a, b) => a - b);
    const remaining = facts.map((fact) => fact.turns.length);
    const nextTurn = facts.map(() => 0);
    for (const position of positions) {
      const open = remaining.flatMap((left, i) => (left > 0 ? [i] : []));
      const chosen = pick(r, open);
      slots[position] = { kind: 'fact', fact: chosen, turn: nextTurn[chosen]! };
      nextTurn[chosen]! += 1;
      remaining[chosen]! -= 1;
    }

    // Fillers: chatter on the conversation's topics (plus one more), decoys, small talk.
    const topics = [...new Set<Topic>([...facts.map((f) => f.topic), pick(r, TOPICS)])];
    const used = new Set<string>();
    let decoys = 0;
    for (let i = 0, attempts = 0; i < slots.length; i++) {
      if (slots[i]) continue;
      if (++attempts > 1000) throw new Error(`conversation ${index}: ran out of filler turns`);
      const topic = pick(r, topics);
      let text: string;
      let slotTopic: Topic | null = topic;
      const roll = r();
      if (roll < 0.22 && decoys < 2) {
        text = pick(r, DECOYS[topic])(ctx);
        decoys += 1;
      } else if (roll < 0.8) {
        text = pick(r, CHATTER[topic]);
      } else {
        text = pick(r, SMALL_TALK);
        slotTopic = null;
      }
      if (used.has(text)) {
        i -= 1;
        continue;
      }
      used.add(text);
      slots[i] = { kind: 'filler', text, topic: slotTopic };
    }

    const messages: Message[] = [
      { role: 'user', content: `${pick(r, INTROS)(full, first)} ${pick(r, HOOKS)}` },
      { role: 'assistant', content: pick(r, INTRO_REPLIES)(first) },
    ];
    const turnMessage = facts.map((fact) => fact.turns.map(() => -1));
    const given = new Set<string>();
    for (const slot of slots) {
      const s = slot!;
      if (s.kind === 'fact') {
        const fact = facts[s.fact]!;
        let text = fact.turns[s.turn]!;
        if (chance(r, 0.2)) text = pick(r, SELF_MENTIONS)(first) + text;
        turnMessage[s.fact]![s.turn] = messages.length;
        messages.push({ role: 'user', content: text });
        messages.push({ role: 'assistant', content: reply(r, fact.topic, first, given) });
      } else {
        messages.push({ role: 'user', content: s.text });
        messages.push({ role: 'assistant', content: reply(r, s.topic, first, given) });
      }
    }

    // One question per fact, of the kind most under-represented so far.
    for (const [f, fact] of facts.entries()) {
      const kinds = [...new Set(fact.questions.map((q) => q.kind))];
      const deficit = (kind: QuestionKind) => (kindCounts[kind] + 1) / KIND_TARGETS[kind];
      const best = Math.min(...kinds.map(deficit));
      const kind = pick(
        r,
        kinds.filter((k) => deficit(k) === best),
      );
      const ofKind = fact.questions.filter((q) => q.kind === kind);
      // Prefer questions whose evidence spans turns (name in one, fact in another) when there are any.
      const linked = ofKind.filter((q) => q.evidence.length > 1);
      const draft = pick(r, linked.length > 0 && chance(r, 0.75) ? linked : ofKind);
      kindCounts[kind] += 1;
      const id = `c${String(index).padStart(2, '0')}-${fact.type}`;
      questions.push({
        id,
        kind,
        split: 'test', // assigned below, once all questions exist
        text: pick(r, draft.texts),
        answer: draft.answer,
        fact: fact.type,
        conversation: index,
        evidence: draft.evidence.map((turn) => ({ conversation: index, message: turnMessage[f]![turn]! })),
        namesUser: draft.evidence.some((turn) => messages[turnMessage[f]![turn]!]!.content.includes(first)),
      });
    }

    conversations.push({ index, user: full, firstName: first, facts: facts.map((f) => f.type), messages });
  }

  assignSplits(questions);
  const corpus = { seed, conversations, questions };
  checkCorpus(corpus);
  return corpus;
}

/** Self-checks: evidence points at user turns holding the answer; no question gives its answer away. */
export function checkCorpus(corpus: Corpus): void {
  for (const q of corpus.questions) {
    if (q.evidence.length === 0) throw new Error(`${q.id}: no evidence`);
    const texts = q.evidence.map((e) => {
      const message = corpus.conversations[e.conversation]?.messages[e.message];
      if (!message || message.role !== 'user') throw new Error(`${q.id}: evidence ${e.conversation}:${e.message} is not a user turn`);
      return message.content.toLowerCase();
    });
    if (!texts.some((text) => text.includes(q.answer.toLowerCase()))) throw new Error(`${q.id}: no evidence turn states "${q.answer}"`);
    if (q.text.toLowerCase().includes(q.answer.toLowerCase())) throw new Error(`${q.id}: question "${q.text}" contains its answer`);
  }
  for (const c of corpus.conversations) {
    if (c.messages.length < 12 || c.messages.length > 20) throw new Error(`conversation ${c.index}: ${c.messages.length} messages`);
    c.messages.forEach((m, i) => {
      if (m.role !== (i % 2 === 0 ? 'user' : 'assistant')) throw new Error(`conversation ${c.index}: roles do not alternate at ${i}`);
    });
    if (!c.messages[0]!.content.includes(c.firstName)) throw new Error(`conversation ${c.index}: the user does not introduce themselves`);
  }
}

export interface CorpusStats {
  conversations: number;
  messages: number;
  questions: number;
  byKind: Record<string, number>;
  bySplit: Record<string, number>;
  multiEvidence: number;
  namingUser: number;
}

export function corpusStats(corpus: Corpus): CorpusStats {
  const byKind: Record<string, number> = {};
  const bySplit: Record<string, number> = {};
  for (const q of corpus.questions) {
    byKind[q.kind] = (byKind[q.kind] ?? 0) + 1;
    bySplit[q.split] = (bySplit[q.split] ?? 0) + 1;
  }
  return {
    conversations: corpus.conversations.length,
    messages: corpus.conversations.reduce((sum, c) => sum + c.messages.length, 0),
    questions: corpus.questions.length,
    byKind,
    bySplit,
    multiEvidence: corpus.questions.filter((q) => q.evidence.length > 1).length,
    namingUser: corpus.questions.filter((q) => q.namesUser).length,
  };
}

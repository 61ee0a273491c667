/** What a fact type is: how it makes a planted fact, its turns and the questions about it. */
import type { QuestionKind, Topic } from '../corpus.js';
import { COMPANY_SUFFIXES, FIRST_NAMES, STEMS } from '../pools.js';
import { type Rng, type Unique, pick } from '../random.js';

export interface Ctx {
  r: Rng;
  u: Unique;
  first: string;
}

export interface QuestionDraft {
  kind: QuestionKind;
  texts: string[];
  answer: string;
  /** Indexes into the fact's turns. */
  evidence: number[];
}

/** What a fact type makes: the turns that plant one fact, and the questions about it. */
export interface FactBody {
  /** User turns, in conversation order. */
  turns: string[];
  questions: QuestionDraft[];
}

/** A planted fact: its body, with the type and topic of the fact type that made it. */
export interface Fact extends FactBody {
  type: string;
  topic: Topic;
}

export interface FactType {
  type: string;
  topic: Topic;
  /** Relative frequency: common life events recur in more conversations (harder distractors). */
  weight: number;
  make(c: Ctx): Fact;
}

/** A fact type whose facts carry its own type and topic, so that no maker can give another. */
export function factType(type: string, topic: Topic, weight: number, makeBody: (c: Ctx) => FactBody): FactType {
  return { type, topic, weight, make: (c) => ({ type, topic, ...makeBody(c) }) };
}

export const company = (c: Ctx): string => c.u.make(() => `${pick(c.r, STEMS)} ${pick(c.r, COMPANY_SUFFIXES)}`);
export const personName = (c: Ctx): string => c.u.from(c.r, FIRST_NAMES);

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

export interface Fact {
  type: string;
  topic: Topic;
  /** User turns, in conversation order. */
  turns: string[];
  questions: QuestionDraft[];
}

export interface FactType {
  type: string;
  topic: Topic;
  /** Relative frequency: common life events recur in more conversations (harder distractors). */
  weight: number;
  make(c: Ctx): Fact;
}

export const company = (c: Ctx): string => c.u.make(() => `${pick(c.r, STEMS)} ${pick(c.r, COMPANY_SUFFIXES)}`);
export const personName = (c: Ctx): string => c.u.from(c.r, FIRST_NAMES);

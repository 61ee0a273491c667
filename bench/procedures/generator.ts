/**
 * Procedural conversations with known answers, for the procedure bench: six recurring processes
 * (expense approval, support ticket, order fulfilment, deployment, onboarding, refund) told with
 * paraphrased verbs, optional and reordered steps, cases that stop early, cases split over two
 * conversations (joined by their number, or by their subject when they have none: chaining rule 4),
 * interleaved small talk, one-off procedures, over several collections. Every step message records its planted verb class and case, so the bench can score
 * traces, instance links, positions and patterns.
 */
import { seededRandom } from '../texts.js';

export interface PlantedProcess {
  name: string;
  /** The full step sequence (verb classes); its length is the pattern's expected state count. */
  steps: string[];
  /** Indexes of steps that are sometimes left out. */
  optional: number[];
  /** Pairs of neighbouring step indexes that are sometimes swapped. */
  swappable: [number, number][];
  /** Subject of a case: a plain noun phrase or one carrying the case number. */
  subject: (caseNumber: number) => string;
}

export const PROCESSES: PlantedProcess[] = [
  { name: 'expense', steps: ['submit', 'review', 'approve', 'pay'], optional: [1], swappable: [], subject: () => 'expense report' },
  { name: 'ticket', steps: ['create', 'assign', 'escalate', 'complete'], optional: [2], swappable: [], subject: (n) => `ticket ${n}` },
  { name: 'order', steps: ['request', 'pay', 'ship', 'deliver'], optional: [], swappable: [[1, 2]], subject: (n) => `order ${n}` },
  { name: 'deployment', steps: ['review', 'approve', 'deploy', 'notify'], optional: [3], swappable: [], subject: () => 'release' },
  {
    name: 'onboarding',
    steps: ['sign', 'provision', 'train', 'complete'],
    optional: [],
    swappable: [[1, 2]],
    subject: () => 'onboarding plan',
  },
  { name: 'refund', steps: ['request', 'approve', 'refund'], optional: [], swappable: [], subject: (n) => `refund ${n}` },
];

const PEOPLE = ['Alice', 'Bob', 'Carol', 'Dave', 'Erin', 'Frank', 'Grace', 'Heidi'];
const TEAMS = ['the network team', 'the hardware team', 'the billing team', 'the platform team'];

/** Paraphrases per verb class: {s} the subject, {a} and {b} people, {t} a team. */
const PHRASES: Record<string, string[]> = {
  submit: ['I submitted the {s}.', 'I filed the {s}.', 'I sent in the {s}.'],
  review: ['{a} reviewed the {s}.', '{a} checked the {s}.', '{a} looked over the {s}.'],
  approve: ['{a} approved the {s}.', '{a} signed off on the {s}.', '{a} authorized the {s}.'],
  pay: ['{a} paid the {s}.', '{a} settled the {s}.', 'Finance reimbursed the {s}.'],
  create: ['I opened {s}.', 'I raised {s}.', 'I logged {s}.'],
  assign: ['{a} assigned {s} to {b}.', '{a} routed {s} to {b}.'],
  escalate: ['{b} escalated {s} to {t}.', '{b} forwarded {s} to {t}.'],
  complete: ['{a} resolved the {s}.', '{a} closed the {s}.', '{a} finished the {s}.'],
  request: ['I requested {s}.', 'I ordered {s}.'],
  ship: ['The warehouse shipped {s}.', 'The warehouse dispatched {s}.'],
  deliver: ['The courier delivered {s}.', '{a} received {s}.'],
  deploy: ['{a} deployed the {s}.', '{a} rolled out the {s}.', '{a} released the {s}.'],
  notify: ['{a} notified the customers about the {s}.', '{a} informed the support team about the {s}.'],
  sign: ['{b} signed the {s}.', '{b} countersigned the {s}.'],
  provision: ['IT provisioned the {s}.', 'IT configured the {s}.'],
  train: ['{a} trained {b} on the {s}.', '{a} coached {b} through the {s}.'],
  refund: ['{a} refunded {s}.', '{a} credited {s}.'],
  schedule: ['I scheduled the {s}.', 'I booked the {s}.'],
  cancel: ['I cancelled the {s}.', 'I withdrew the {s}.'],
  update: ['{a} updated the {s}.', '{a} revised the {s}.'],
};

const ONE_OFF_CLASSES = ['schedule', 'cancel', 'update', 'notify', 'review', 'sign', 'deploy', 'refund'];
const ONE_OFF_SUBJECTS = [
  'dentist appointment',
  'gym membership',
  'team offsite',
  'office move',
  'newsletter',
  'garden plan',
  'budget sheet',
];
/** One-offs are unrelated errands: qualified so that two rarely share a subject (which would chain them). */
const ONE_OFF_QUALIFIERS = [
  'quarterly',
  'annual',
  'weekly',
  'monthly',
  'local',
  'big',
  'small',
  'urgent',
  'regional',
  'internal',
  'shared',
  'yearly',
];

const SMALL_TALK = [
  'How was your weekend?',
  'The weather is lovely today.',
  'I went hiking with my dog.',
  'Thanks, have a nice day!',
  'The coffee machine is broken again.',
  'My sister visited us last month.',
  'Lunch at the new place was great.',
];

export interface PlantedStep {
  verbClass: string;
  /** 1-indexed position of this step in its process's full step list. */
  templateStep: number;
}

export interface BenchMessage {
  role: 'user' | 'assistant';
  content: string;
  /** Set on step messages: what the bench expects derivation to find there. */
  step?: PlantedStep;
}

export interface BenchConversation {
  memoryId: string;
  memoryTime: Date;
  messages: BenchMessage[];
  /** Planted case (instance) id, or null for small talk. */
  caseId: string | null;
}

export interface PlantedCase {
  id: string;
  /** Process name, or null for a one-off. */
  process: string | null;
  /** 1-indexed step of the full process reached by the last step told (for the position check). */
  lastTemplateStep: number;
  stepCount: number;
}

export interface BenchCollection {
  id: string;
  processes: string[];
  conversations: BenchConversation[];
  cases: Map<string, PlantedCase>;
}

export interface GeneratorOptions {
  collections: number;
  processesPerCollection: number;
  casesPerProcess: number;
  oneOffs: number;
  smallTalk: number;
  seed: number;
}

/** Generates the collections (deterministic for a seed). */
export function generateCollections(options: GeneratorOptions): BenchCollection[] {
  const random = seededRandom(options.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  let caseNumber = 4000;
  let clock = Date.UTC(2026, 0, 5, 9);
  const nextTime = () => new Date((clock += 3_600_000 + Math.floor(random() * 3_600_000)));
  const fill = (template: string, subject: string) =>
    template.replace('{s}', subject).replace('{a}', pick(PEOPLE)).replace('{b}', pick(PEOPLE)).replace('{t}', pick(TEAMS));
  const withTalk = (messages: BenchMessage[]): BenchMessage[] => {
    const out: BenchMessage[] = [];
    for (const message of messages) {
      if (random() < 0.3) out.push({ role: random() < 0.5 ? 'assistant' : 'user', content: pick(SMALL_TALK) });
      out.push(message);
    }
    return out;
  };

  const collections: BenchCollection[] = [];
  for (let c = 0; c < options.collections; c++) {
    const chosen = [...PROCESSES].sort(() => random() - 0.5).slice(0, options.processesPerCollection);
    const collection: BenchCollection = {
      id: `collection-${c}`,
      processes: chosen.map((p) => p.name),
      conversations: [],
      cases: new Map(),
    };
    const pending: BenchConversation[] = [];
    for (const process of chosen) {
      for (let k = 0; k < options.casesPerProcess; k++) {
        const number = caseNumber++;
        const caseId = `${collection.id}/${process.name}/${number}`;
        let indexes = process.steps.map((_, index) => index).filter((index) => !process.optional.includes(index) || random() >= 0.3);
        for (const [a, b] of process.swappable) {
          const ia = indexes.indexOf(a);
          const ib = indexes.indexOf(b);
          if (ia >= 0 && ib === ia + 1 && random() < 0.3) [indexes[ia], indexes[ib]] = [indexes[ib]!, indexes[ia]!];
        }
        // One case in five stops early: still running.
        if (random() < 0.2) indexes = indexes.slice(0, Math.max(2, indexes.length - 1));
        const subject = process.subject(number);
        const steps: BenchMessage[] = indexes.map((index) => ({
          role: 'user',
          content: fill(pick(PHRASES[process.steps[index]!]!), subject),
          step: { verbClass: process.steps[index]!, templateStep: index + 1 },
        }));
        collection.cases.set(caseId, {
          id: caseId,
          process: process.name,
          lastTemplateStep: Math.max(...indexes.slice(-1).map((index) => index + 1)),
          stepCount: steps.length,
        });
        // Cases are sometimes told in two conversations: numbered ones join by their number,
        // unnumbered ones by their subject (chaining rule 4).
        if (steps.length >= 3 && random() < 0.3) {
          const cut = 1 + Math.floor(random() * (steps.length - 1));
          pending.push({ memoryId: '', memoryTime: new Date(0), messages: withTalk(steps.slice(0, cut)), caseId });
          pending.push({ memoryId: '', memoryTime: new Date(0), messages: withTalk(steps.slice(cut)), caseId });
        } else {
          pending.push({ memoryId: '', memoryTime: new Date(0), messages: withTalk(steps), caseId });
        }
      }
    }
    for (let k = 0; k < options.oneOffs; k++) {
      const caseId = `${collection.id}/one-off/${k}`;
      const classes = [...ONE_OFF_CLASSES].sort(() => random() - 0.5).slice(0, 2 + Math.floor(random() * 2));
      const subject = `${pick(ONE_OFF_QUALIFIERS)} ${pick(ONE_OFF_SUBJECTS)}`;
      const steps: BenchMessage[] = classes.map((verbClass, index) => ({
        role: 'user',
        content: fill(pick(PHRASES[verbClass]!), subject),
        step: { verbClass, templateStep: index + 1 },
      }));
      collection.cases.set(caseId, { id: caseId, process: null, lastTemplateStep: classes.length, stepCount: classes.length });
      pending.push({ memoryId: '', memoryTime: new Date(0), messages: withTalk(steps), caseId });
    }
    for (let k = 0; k < options.smallTalk; k++) {
      const messages: BenchMessage[] = Array.from({ length: 2 + Math.floor(random() * 3) }, (_, index) => ({
        role: index % 2 === 0 ? 'user' : 'assistant',
        content: pick(SMALL_TALK),
      }));
      pending.push({ memoryId: '', memoryTime: new Date(0), messages, caseId: null });
    }
    // Interleave cases in time; a split case's halves keep their told order: wherever one of its
    // halves was drawn, the next untold half goes.
    const shuffled = pending.map((conversation) => ({ conversation, key: random() })).sort((x, y) => x.key - y.key);
    const halvesLeft = new Map<string, BenchConversation[]>();
    for (const conversation of pending) {
      if (!conversation.caseId) continue;
      const list = halvesLeft.get(conversation.caseId) ?? [];
      list.push(conversation);
      halvesLeft.set(conversation.caseId, list);
    }
    const final = shuffled.map(({ conversation }) => (conversation.caseId ? halvesLeft.get(conversation.caseId)!.shift()! : conversation));
    final.forEach((conversation, index) => {
      conversation.memoryId = `${collection.id}/memory-${String(index).padStart(5, '0')}`;
      conversation.memoryTime = nextTime();
    });
    collection.conversations = final;
    collections.push(collection);
  }
  return collections;
}

/**
 * The closed taxonomy of procedure steps (verb classes) and the lexicon that maps verb lemmas to
 * them. A verb not in the lexicon is not a procedure step ("went hiking", "liked the film"): small
 * talk yields no trace. docs/workflows.md lists the taxonomy; adding a class is a documented change.
 */

export const VERB_CLASSES = [
  'create',
  'submit',
  'request',
  'assign',
  'review',
  'approve',
  'reject',
  'escalate',
  'schedule',
  'ship',
  'deliver',
  'pay',
  'refund',
  'cancel',
  'complete',
  'deploy',
  'notify',
  'update',
  'provision',
  'train',
  'sign',
] as const;

export type VerbClass = (typeof VERB_CLASSES)[number];

/** The state a step leaves its subject in ("report submitted"). */
export const STATE_WORD: Record<VerbClass, string> = {
  create: 'created',
  submit: 'submitted',
  request: 'requested',
  assign: 'assigned',
  review: 'reviewed',
  approve: 'approved',
  reject: 'rejected',
  escalate: 'escalated',
  schedule: 'scheduled',
  ship: 'shipped',
  deliver: 'delivered',
  pay: 'paid',
  refund: 'refunded',
  cancel: 'cancelled',
  complete: 'completed',
  deploy: 'deployed',
  notify: 'notified',
  update: 'updated',
  provision: 'provisioned',
  train: 'trained',
  sign: 'signed',
};

/**
 * Where a step usually sits in a process, early to late: the lexicon's ordering, used by the
 * chaining rule across memories (chaining.ts rule 4) to decide whether a step can continue a chain
 * that stands at another step. Coarse on purpose: classes of one stage do not follow each other
 * across memories ("submitted" again is a new report), and `complete` and `cancel` end a chain.
 */
export const STAGE: Record<VerbClass, number> = {
  create: 0,
  submit: 1,
  request: 1,
  sign: 1,
  assign: 2,
  schedule: 2,
  update: 2,
  review: 3,
  provision: 3,
  train: 3,
  escalate: 4,
  approve: 4,
  reject: 4,
  ship: 5,
  deploy: 5,
  pay: 5,
  deliver: 6,
  notify: 6,
  refund: 6,
  complete: 7,
  cancel: 7,
};

/** Classes after which a chain is closed: nothing continues it across memories. */
export const TERMINAL_CLASSES: ReadonlySet<string> = new Set<VerbClass>(['complete', 'cancel']);

const isVerbClass = (value: string): value is VerbClass => (VERB_CLASSES as readonly string[]).includes(value);

/** Whether a step of class `next` can continue a chain whose current step is `current` (rule above). */
export function canFollow(current: string, next: string): boolean {
  if (!isVerbClass(current) || !isVerbClass(next) || TERMINAL_CLASSES.has(current)) return false;
  return STAGE[next] > STAGE[current];
}

/** The open classes a step of class `next` can follow, and the classes that can follow `current` (store look-ups). */
export const classesBefore = (next: string): VerbClass[] => VERB_CLASSES.filter((current) => canFollow(current, next));
export const classesAfter = (current: string): VerbClass[] => VERB_CLASSES.filter((next) => canFollow(current, next));

/**
 * Lemma (or "lemma particle" for phrasal verbs, looked up first) → class. Paraphrases map to the
 * same class so that "filed", "sent in" and "submitted" are one step.
 */
const LEXICON: Record<VerbClass, string[]> = {
  create: ['create', 'open', 'draft', 'prepare', 'raise', 'log', 'register', 'initiate', 'set up', 'write up', 'start'],
  submit: ['submit', 'file', 'lodge', 'upload', 'send in', 'hand in', 'turn in', 'put in'],
  request: ['request', 'order', 'apply', 'ask for', 'invoice', 'requisition', 'bill'],
  assign: ['assign', 'allocate', 'delegate', 'route', 'reassign', 'pick up', 'hand off', 'triage'],
  review: [
    'review',
    'check',
    'inspect',
    'examine',
    'verify',
    'evaluate',
    'assess',
    'investigate',
    'diagnose',
    'test',
    'look over',
    'go over',
    'validate',
  ],
  approve: ['approve', 'authorize', 'authorise', 'okay', 'greenlight', 'endorse', 'sanction', 'sign off', 'accept'],
  reject: ['reject', 'decline', 'deny', 'refuse', 'turn down', 'disapprove'],
  escalate: ['escalate', 'refer', 'forward', 'bump up', 'kick up'],
  schedule: ['schedule', 'book', 'reschedule', 'plan', 'arrange'],
  ship: ['ship', 'dispatch', 'send out', 'mail', 'pack'],
  deliver: ['deliver', 'receive', 'arrive', 'collect', 'drop off'],
  pay: ['pay', 'reimburse', 'remit', 'settle', 'wire', 'transfer', 'pay out'],
  refund: ['refund', 'credit', 'pay back'],
  cancel: ['cancel', 'withdraw', 'revoke', 'void', 'abort', 'call off'],
  complete: ['complete', 'finish', 'close', 'resolve', 'finalize', 'finalise', 'fulfil', 'fulfill', 'archive', 'wrap up', 'close out'],
  deploy: ['deploy', 'release', 'launch', 'roll out', 'publish', 'roll back'],
  notify: ['notify', 'inform', 'alert', 'remind', 'announce', 'tell', 'email'],
  update: ['update', 'modify', 'amend', 'revise', 'edit', 'change', 'fix', 'patch'],
  provision: ['provision', 'install', 'configure', 'grant', 'enable', 'issue'],
  train: ['train', 'onboard', 'coach', 'mentor', 'induct'],
  sign: ['sign', 'countersign', 'execute'],
};

const CLASS_OF = new Map<string, VerbClass>();
for (const verbClass of VERB_CLASSES) for (const lemma of LEXICON[verbClass]) CLASS_OF.set(lemma, verbClass);

/** The class of a verb lemma, trying the phrasal form ("sign off") before the bare verb ("sign"). */
export function classifyVerb(lemma: string, particle?: string): { verbClass: VerbClass; phrasal: boolean } | null {
  if (particle) {
    const phrasal = CLASS_OF.get(`${lemma} ${particle}`);
    if (phrasal) return { verbClass: phrasal, phrasal: true };
  }
  const bare = CLASS_OF.get(lemma);
  return bare ? { verbClass: bare, phrasal: false } : null;
}

/** Every lemma the lexicon knows, per class (for the docs and the bench's paraphrase checks). */
export const lexiconEntries = (): Readonly<Record<VerbClass, readonly string[]>> => LEXICON;

/**
 * Deterministic English texts for the bench: each one about 1 KB (one chunk at the default
 * CHUNK_MAX_CHARS of 1200), built from a seeded generator so every run posts the same corpus.
 * Each text centres on one subject (person, city, occupation, project, topic) and comes with a
 * query naming those facts, which should retrieve it among a few hundred similar texts.
 */

import { seededRandom } from '../core/random.js';

export { seededRandom };

const FIRST_NAMES = [
  'Alice',
  'Bruno',
  'Chiara',
  'Dmitri',
  'Elena',
  'Farid',
  'Greta',
  'Hiroshi',
  'Ingrid',
  'Jonas',
  'Kavya',
  'Lucas',
  'Marta',
  'Nikolai',
  'Olga',
  'Pedro',
  'Quinn',
  'Rosa',
  'Samir',
  'Tomasz',
  'Ursula',
  'Viktor',
  'Wen',
  'Ximena',
  'Yusuf',
  'Zofia',
];
const LAST_NAMES = [
  'Andersen',
  'Bauer',
  'Costa',
  'Dubois',
  'Eriksen',
  'Fischer',
  'Garcia',
  'Horvat',
  'Ito',
  'Jansen',
  'Kowalski',
  'Lindqvist',
  'Moreau',
  'Novak',
  'Okafor',
  'Petrov',
  'Rossi',
  'Schmidt',
  'Tanaka',
  'Varga',
];
const CITIES = [
  'Berlin',
  'Lisbon',
  'Oslo',
  'Krakow',
  'Lyon',
  'Porto',
  'Seville',
  'Tallinn',
  'Ghent',
  'Bologna',
  'Helsinki',
  'Vienna',
  'Zagreb',
  'Dublin',
  'Riga',
  'Valencia',
  'Gdansk',
  'Utrecht',
  'Graz',
  'Turin',
];
const OCCUPATIONS = [
  'marine biologist',
  'bakery owner',
  'railway engineer',
  'violin teacher',
  'tax accountant',
  'beekeeper',
  'civil architect',
  'emergency nurse',
  'software tester',
  'ceramic artist',
  'wine merchant',
  'bicycle mechanic',
  'museum curator',
  'glacier researcher',
  'school librarian',
  'furniture restorer',
  'airline dispatcher',
  'organic farmer',
  'patent lawyer',
  'radio journalist',
];
const TOPICS = [
  'urban beekeeping',
  'tidal energy',
  'medieval manuscripts',
  'sourdough fermentation',
  'night trains',
  'coral reef recovery',
  'public libraries',
  'solar rooftops',
  'river flooding',
  'chess openings',
  'vintage motorcycles',
  'mountain rescue',
  'community gardens',
  'jazz improvisation',
  'bird migration',
  'earthquake safety',
  'wool dyeing',
  'local elections',
  'cold water swimming',
  'typewriter repair',
];
const PROJECTS = [
  'Aurora',
  'Blue Harbor',
  'Copperfield',
  'Driftwood',
  'Evergreen',
  'Foxglove',
  'Granite',
  'Hollow Oak',
  'Iris',
  'Juniper',
  'Kestrel',
  'Lighthouse',
  'Meadowlark',
  'Northwind',
  'Orchard',
  'Pinecone',
];
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MONTHS = ['January', 'March', 'April', 'June', 'August', 'September', 'October', 'November'];
const OBJECTS = [
  'a battered notebook',
  'a red thermos',
  'a folding ladder',
  'an old film camera',
  'a box of seeds',
  'a brass compass',
  'a stack of maps',
  'a laptop covered in stickers',
  'a wooden toolbox',
  'a pair of binoculars',
];
const FEELINGS = ['cautiously optimistic', 'frustrated', 'delighted', 'curious', 'exhausted but proud', 'surprised'];

interface Subject {
  first: string;
  last: string;
  city: string;
  occupation: string;
  topic: string;
  project: string;
  colleague: string;
}

/** "a" or "an" before a noun phrase (by its first letter, which suffices for these lists). */
const article = (phrase: string): string => (/^[aeiou]/i.test(phrase) ? `an ${phrase}` : `a ${phrase}`);

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

type Template = (s: Subject, random: () => number) => string;

const FILLERS: Template[] = [
  (s, r) => `Every ${pick(r, WEEKDAYS)} morning ${s.first} takes ${pick(r, OBJECTS)} to the office before the first meeting.`,
  (s, r) =>
    `In ${pick(r, MONTHS)} the ${s.project} project received funding for ${2 + Math.floor(r() * 9)} more months of work on ${s.topic}.`,
  (s) => `${s.colleague} joined the team last year and now handles the budget and most of the correspondence.`,
  (s, r) => `Friends say ${s.first} is ${pick(r, FEELINGS)} about how the work on ${s.topic} is going.`,
  (s, r) =>
    `The group meets in a small room near the central station of ${s.city}, usually around ${7 + Math.floor(r() * 4)} in the evening.`,
  (s, r) =>
    `A local newspaper wrote about the ${s.project} initiative after a public talk attended by ${20 + Math.floor(r() * 180)} people.`,
  (s) => `Before becoming ${article(s.occupation)}, ${s.first} spent several years travelling and keeping a detailed diary.`,
  (s, r) => `The next milestone is a report due in ${pick(r, MONTHS)}, which ${s.colleague} will review first.`,
  (s, r) => `On weekends ${s.first} often cycles along the river with ${pick(r, OBJECTS)} strapped to the back of the bike.`,
  (s) => `Several volunteers from ${s.city} help collect measurements and photographs for the archive.`,
  (s, r) => `Last winter a storm damaged the workshop, and repairs took ${2 + Math.floor(r() * 6)} weeks to finish.`,
  (s) => `${s.first} believes that explaining ${s.topic} to schoolchildren is the best way to build lasting support.`,
  (s, r) => `The team keeps a shared spreadsheet with ${100 + Math.floor(r() * 900)} entries describing every observation so far.`,
  () => `A partner university has offered laboratory space, although the contract is still being negotiated.`,
  (s, r) => `During a ${pick(r, WEEKDAYS)} workshop, participants argued for hours about the right priorities for next year.`,
  (s) => `${s.colleague} prefers careful planning, while ${s.first} likes to test ideas quickly and fix problems later.`,
  (s, r) => `The phone number of the office changed in ${pick(r, MONTHS)}, which confused several long-time supporters.`,
  (s) => `Most of the equipment was bought second-hand from a company that closed its branch in ${s.city}.`,
  (s, r) => `A documentary crew followed the work for ${3 + Math.floor(r() * 10)} days and interviewed almost everyone involved.`,
  (s) => `The long-term goal is to publish an open guide about ${s.topic} that anyone can adapt.`,
];

export interface BenchText {
  text: string;
  /** A question naming the text's subject: it should retrieve this text. */
  query: string;
}

function makeSubject(random: () => number): Subject {
  const first = pick(random, FIRST_NAMES);
  let colleague = `${pick(random, FIRST_NAMES)} ${pick(random, LAST_NAMES)}`;
  if (colleague.startsWith(first)) colleague = `${pick(random, FIRST_NAMES)} ${pick(random, LAST_NAMES)}`;
  return {
    first,
    last: pick(random, LAST_NAMES),
    city: pick(random, CITIES),
    occupation: pick(random, OCCUPATIONS),
    topic: pick(random, TOPICS),
    project: pick(random, PROJECTS),
    colleague,
  };
}

/** One text of about `targetChars` characters (never above targetChars + ~160). */
export function makeText(random: () => number, targetChars = 1000): BenchText {
  const s = makeSubject(random);
  const sentences = [
    `${s.first} ${s.last} is ${article(s.occupation)} living in ${s.city} who leads the ${s.project} project on ${s.topic}.`,
  ];
  let length = sentences[0]!.length;
  const used = new Set<number>();
  while (length < targetChars && used.size < FILLERS.length) {
    const index = Math.floor(random() * FILLERS.length);
    if (used.has(index)) continue;
    used.add(index);
    const sentence = FILLERS[index]!(s, random);
    sentences.push(sentence);
    length += sentence.length + 1;
  }
  return {
    text: sentences.join(' '),
    query: `${s.first} ${s.last}, the ${s.occupation} in ${s.city} working on ${s.topic} (${s.project} project)`,
  };
}

/** `count` texts from one seed: the same seed always gives the same corpus. */
export function makeTexts(count: number, seed: number, targetChars = 1000): BenchText[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => makeText(random, targetChars));
}

/** Free-form search queries (for the 10k-chunk search scenario). */
export function makeQueries(count: number, seed: number): string[] {
  const random = seededRandom(seed);
  const forms: ((s: Subject) => string)[] = [
    (s) => `What is known about ${s.topic} in ${s.city}?`,
    (s) => `Who works as ${article(s.occupation)} on the ${s.project} project?`,
    (s) => `${s.first} ${s.last} notes about ${s.topic}`,
    (s) => `funding and milestones of the ${s.project} initiative`,
    (s) => `how did the storm affect the workshop of the ${s.occupation}`,
  ];
  return Array.from({ length: count }, () => pick(random, forms)(makeSubject(random)));
}

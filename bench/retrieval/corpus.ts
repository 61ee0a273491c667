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
// Random helpers

type Rng = () => number;

const pick = <T>(r: Rng, items: readonly T[]): T => items[Math.floor(r() * items.length)]!;
const int = (r: Rng, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
const chance = (r: Rng, p: number): boolean => r() < p;
const list = (text: string): string[] =>
  text
    .split('|')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
const capitalize = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);
const article = (phrase: string): string => (/^[aeiou]/i.test(phrase) ? `an ${phrase}` : `a ${phrase}`);
const LETTERS = 'ABCDEFGHJKLMNPRSTUVWXYZ';
const letters = (r: Rng, n: number): string => Array.from({ length: n }, () => pick(r, [...LETTERS])).join('');
/** Fisher–Yates on a copy. */
function shuffled<T>(r: Rng, items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}
const digits = (r: Rng, n: number): string => Array.from({ length: n }, (_, i) => String(int(r, i === 0 ? 1 : 0, 9))).join('');

/** Hands out values never used before anywhere in the corpus: every name and code is unambiguous. */
class Unique {
  private readonly used = new Set<string>();

  from(r: Rng, items: readonly string[]): string {
    const free = items.filter((item) => !this.used.has(item.toLowerCase()));
    if (free.length === 0) throw new Error(`value pool exhausted (${items.slice(0, 3).join(', ')}, ...)`);
    const value = pick(r, free);
    this.used.add(value.toLowerCase());
    return value;
  }

  make(make: () => string): string {
    for (let attempt = 0; attempt < 1000; attempt++) {
      const value = make();
      if (this.used.has(value.toLowerCase())) continue;
      this.used.add(value.toLowerCase());
      return value;
    }
    throw new Error('could not make a unique value');
  }
}

// ---------------------------------------------------------------------------------------------
// Value pools (all invented or generic; nothing here refers to real people)

const FIRST_NAMES = list(`
  Priya | Tomasz | Amara | Lukas | Ines | Kofi | Mei | Rafael | Sanna | Dev | Ayesha | Bastien | Chioma | Diego | Elif | Florin |
  Grace | Hamid | Ilse | Jun | Kalani | Leila | Mateo | Nadia | Oskar | Paola | Rashid | Sofia | Tariq | Uma | Valentin | Wanjiru |
  Xavier | Yara | Zainab | Anders | Beatriz | Cyrus | Dagny | Emeka | Fatima | Gustavo | Hana | Idris | Jelena | Kenji | Lucia |
  Milos | Noor | Orla | Pavel | Rhea | Stellan | Thandiwe | Ulrich | Vesna | Wiktor | Ximena | Yusuf | Zora | Anouk | Benedikt |
  Carmen | Darius | Esther | Filip | Gwen | Hugo | Ayaan | Jasper | Kirra | Lorenzo | Maren | Nikhil | Odette | Pablo | Ragnhild |
  Soren | Tamsin | Ugo | Vivienne | Wesley | Yasmin | Zeno | Adaeze | Bjorn | Celeste | Dmitri | Eun-ji | Fergus | Giulia |
  Henrik | Isadora | Jamal | Katarina | Lars | Mirela | Nils | Olumide | Petra | Quentin | Rosalind | Sebastian | Tuva | Umar |
  Valeria | Willem | Yannick | Zuzana | Aurelio | Brigid | Cosmin | Delphine | Eamon | Freya | Gideon | Helga | Ignacio | Johanna |
  Kaito | Liesel | Marcus | Nour | Ottilie | Piotr | Rania | Saoirse | Teodor | Ulla | Viktor | Wren | Yevgenia | Zaid | Agnes |
  Bram | Cecilia | Dorian | Eleni | Frederik | Gemma | Hector | Ivana | Joaquin | Kwame | Lotte | Magnus | Nell | Osman | Pia |
  Ruben | Selin | Tobias | Ursula | Vikram | Wilhelmina | Yoshiro | Zofia | Alvaro | Birgit | Constantin | Dalia | Emil | Farah |
  Gunnar | Hedda | Imogen | Jonah | Kasia | Leander | Malik | Nerys | Octavia | Rolf | Sunniva | Thiago | Una | Vilja | Waleed |
  Aziz | Bettina | Caspar | Dunja | Eero | Fenna | Goran | Hilde | Iker | Jorunn | Klaus | Linnea | Mattias | Noemi | Ola
`);
const LAST_NAMES = list(`
  Sharma | Kowalczyk | Okafor | Brandt | Moreira | Mensah | Lin | Castillo | Virtanen | Patel | Rahman | Lefebvre | Nwosu |
  Herrera | Yilmaz | Popescu | Whitfield | Karimi | Vos | Tanaka | Akana | Haddad | Ortega | Petrova | Lindgren | Ricci | Aziz |
  Marchetti | Qureshi | Iyer | Dufour | Mwangi | Bauer | Santos | Eriksen | Balogun | Novak | Ferreira | Osei | Aydin | Hoffmann
`);
const DOCTOR_NAMES = list(`
  Abernathy | Bellweather | Carraway | Delacroix | Edevane | Fairbrother | Gallagher | Halloran | Ingleby | Jessop | Kinsella |
  Lockwood | Merriman | Northcott | Ollerenshaw | Pemberton | Quayle | Rutherford | Sallow | Treadwell | Underhill | Vance |
  Wetherby | Yardley | Ashcombe | Blackwood | Cresswell | Dunmore | Ellery | Fenwick
`);
const PET_NAMES = list(`
  Biscuit | Pepper | Mochi | Waffles | Juniper | Bramble | Noodle | Clementine | Pickle | Ziggy | Marmalade | Tofu | Crumpet |
  Nutmeg | Pistachio | Basil | Dumpling | Sprout | Kipper | Fudge | Pancake | Figaro | Sushi | Toffee | Olive | Chutney | Gizmo |
  Hazel | Merlin | Pumpkin | Rolo | Sesame | Truffle | Wasabi | Yeti | Bagel | Cinnamon | Dottie | Echo | Frankie | Gnocchi |
  Houdini | Inky | Jellybean | Kiwi | Lentil | Muffin | Nacho | Oreo | Popcorn | Quinoa | Radish | Scout | Tinsel | Udon | Velvet |
  Whiskey | Ziti | Acorn | Bonbon | Cashew | Dijon | Espresso | Falafel | Gingersnap | Hobbes | Icarus | Jolly | Krypto | Loki
`);
const DOG_BREEDS = list(
  'beagle | border collie | dachshund | greyhound | labrador | corgi | whippet | cocker spaniel | shiba inu | boxer | miniature poodle | Jack Russell | golden retriever | dalmatian | pug | vizsla',
);
const CAT_BREEDS = list(
  'tabby | Maine Coon | Siamese | ragdoll | Bengal | Persian | British shorthair | black rescue cat | Norwegian forest cat',
);
const STEMS = list(`
  Velmora | Brightmoor | Quillon | Harbrook | Tessaly | Norrow | Calderon | Pinewick | Ashgrove | Moravel | Kestwick | Lumara |
  Ravelin | Dunmere | Corvane | Halden | Oakhurst | Starling | Elmsworth | Tarragon | Wrenfield | Marlow | Ostara | Belcourt |
  Greyfield | Fairlow | Stonemere | Larkspur | Amberley | Copperline | Silvan | Northgate | Thornbury | Evenlode | Meridian |
  Bellhaven | Cadwell | Drummond | Everton | Foxley | Glenhaven | Highcombe | Ivybridge | Juniperhill | Kingsmere | Loxley
`);
const COMPANY_SUFFIXES = list(
  'Analytics | Logistics | Robotics | Health | Media | Energy | Systems | Labs | Foods | Insurance | Architects | Biotech',
);
const SHOP_SUFFIXES = list('Direct | Supply | Home | Outlet | Store | & Co');
const BANK_SUFFIXES = list('Bank | Building Society | Credit Union | Mutual');
const CITIES = list(`
  Lisbon | Porto | Seville | Valencia | Bologna | Naples | Vienna | Prague | Krakow | Tallinn | Riga | Vilnius | Copenhagen |
  Bergen | Stockholm | Helsinki | Reykjavik | Dublin | Edinburgh | Bristol | Lyon | Marseille | Bordeaux | Ghent | Antwerp |
  Rotterdam | Hamburg | Munich | Zurich | Geneva | Ljubljana | Zagreb | Split | Athens | Thessaloniki | Istanbul | Marrakech |
  Tunis | Cairo | Nairobi | Cape Town | Tokyo | Osaka | Seoul | Taipei | Hanoi | Bangkok | Singapore | Montreal | Vancouver |
  Mexico City | Lima | Santiago | Buenos Aires | Bogota
`);
const AIRLINES = list('LH | BA | AF | KL | IB | TP | SK | AY | OS | LX | EI | AZ | LO | OK | TK | DY | FR | U2 | W6 | VY | SN | EW');
const HOTEL_FORMS = [
  (s: string) => `Hotel ${s}`,
  (s: string) => `the ${s} House`,
  (s: string) => `${s} Suites`,
  (s: string) => `the ${s} Inn`,
];
const MONTHS = list('January | February | March | April | May | June | July | August | September | October | November | December');
const WEEKDAYS = list('Monday | Tuesday | Wednesday | Thursday | Friday | Saturday | Sunday');
const PRODUCTS: { item: string; kind: string }[] = [
  ['espresso machine', 'kitchen appliance'],
  ['stand mixer', 'kitchen appliance'],
  ['air fryer', 'kitchen appliance'],
  ['rice cooker', 'kitchen appliance'],
  ['blender', 'kitchen appliance'],
  ['standing desk', 'piece of furniture'],
  ['ergonomic office chair', 'piece of furniture'],
  ['oak bookshelf', 'piece of furniture'],
  ['velvet armchair', 'piece of furniture'],
  ['robot vacuum', 'cleaning gadget'],
  ['cordless vacuum', 'cleaning gadget'],
  ['carpet washer', 'cleaning gadget'],
  ['turntable', 'piece of audio equipment'],
  ['soundbar', 'piece of audio equipment'],
  ['bluetooth speaker', 'piece of audio equipment'],
  ['e-reader', 'electronic device'],
  ['smartwatch', 'electronic device'],
  ['drawing tablet', 'electronic device'],
  ['camping stove', 'bit of outdoor gear'],
  ['two-person tent', 'bit of outdoor gear'],
  ['down sleeping bag', 'bit of outdoor gear'],
  ['sewing machine', 'hobby tool'],
  ['pottery wheel', 'hobby tool'],
  ['telescope', 'hobby tool'],
].map(([item, kind]) => ({ item: item!, kind: kind! }));
const DRUGS: { drug: string; condition: string; plain: string; doses: number[]; unit: string }[] = [
  { drug: 'sertraline', condition: 'anxiety', plain: 'nerves', doses: [50, 100], unit: 'mg' },
  { drug: 'lisinopril', condition: 'high blood pressure', plain: 'hypertension', doses: [10, 20], unit: 'mg' },
  { drug: 'metformin', condition: 'blood sugar', plain: 'prediabetes', doses: [500, 850], unit: 'mg' },
  { drug: 'atorvastatin', condition: 'cholesterol', plain: 'lipid levels', doses: [20, 40], unit: 'mg' },
  { drug: 'levothyroxine', condition: 'underactive thyroid', plain: 'thyroid problem', doses: [50, 75], unit: 'micrograms' },
  { drug: 'omeprazole', condition: 'acid reflux', plain: 'heartburn', doses: [20, 40], unit: 'mg' },
  { drug: 'montelukast', condition: 'asthma', plain: 'breathing trouble', doses: [10], unit: 'mg' },
  { drug: 'propranolol', condition: 'migraines', plain: 'headaches', doses: [40, 80], unit: 'mg' },
  { drug: 'amitriptyline', condition: 'nerve pain', plain: 'chronic pain', doses: [10, 25], unit: 'mg' },
  { drug: 'naproxen', condition: 'knee inflammation', plain: 'sore knee', doses: [250, 500], unit: 'mg' },
  { drug: 'cetirizine', condition: 'hay fever', plain: 'pollen allergy', doses: [10], unit: 'mg' },
  { drug: 'doxycycline', condition: 'chest infection', plain: 'cough', doses: [100], unit: 'mg' },
  { drug: 'prednisolone', condition: 'eczema flare-up', plain: 'skin problem', doses: [5, 10], unit: 'mg' },
  { drug: 'bisoprolol', condition: 'palpitations', plain: 'racing heart', doses: [5], unit: 'mg' },
];
const ROLES = list(`
  data analyst | product designer | backend engineer | account manager | UX researcher | logistics coordinator | project manager |
  sales engineer | people partner | quality inspector | financial controller | content strategist | lab technician | site supervisor
`);
const PROJECT_NAMES = list(`
  Halcyon | Basalt | Tern | Marigold | Quartz | Sundial | Cobalt | Lantern | Nimbus | Paloma | Saffron | Tundra | Vireo | Wicket |
  Zephyr | Alder | Beacon | Cinder | Dovetail | Ember | Fathom | Glacier | Harrow | Indigo | Kelp | Lynx | Mistral | Nettle | Onyx
`);
const INSTRUMENTS = list(
  'cello | violin | saxophone | piano | ukulele | drum kit | trumpet | flute | banjo | accordion | harp | clarinet | bass guitar | mandolin',
);
const WEDDING_PLACES = list(`
  Lake Como | the Cotswolds | Sintra | Dubrovnik | Cornwall | Tuscany | Provence | the Algarve | Bruges | Salzburg | Hallstatt |
  Santorini | the Scottish Highlands | Lake Bled | Mallorca | the Amalfi Coast | Kotor | Cappadocia
`);
const VENUE_FORMS = list('Manor | Hall | Castle | Farm | Abbey | Gardens | Mill');
const PARTY_THEMES = list('dinosaur | pirate | space | mermaid | superhero | jungle | football | unicorn | robot | volcano');
const HOOD_FORMS = [(s: string) => `${s} Hill`, (s: string) => `${s} Park`, (s: string) => `Old ${s}`, (s: string) => `${s} Quarter`];
const PROBLEMS = list(`
  broken boiler | leaking kitchen tap | damp patch in the bedroom | faulty intercom | jammed balcony door | blocked shower drain |
  cracked window | dead radiator | broken washing machine | flickering hallway lights
`);
const CARS = list(`
  Skoda Octavia | Toyota Yaris | Volkswagen Golf | Renault Clio | Honda Jazz | Ford Focus | Kia Ceed | Volvo V60 | Fiat Panda |
  Peugeot 308 | Hyundai Ioniq | Nissan Leaf | Dacia Duster | Subaru Outback | Mini Cooper | Seat Leon | Opel Astra | Citroen Berlingo
`);
const CAR_PARTS = list('clutch | timing belt | brake pads | exhaust | windscreen | alternator | starter motor | rear suspension | gearbox');
const ALLERGENS = list('peanuts | shellfish | sesame | kiwi | hazelnuts | eggs | mustard | celery | soy | cashews | strawberries | oats');
const LOVED_FOODS = list(
  'pad thai | satay | hummus | pavlova | pesto | baklava | prawn curry | granola | tahini cookies | chocolate spread',
);
const DISHES = list(`
  lamb tagine | mushroom risotto | duck ramen | fish tacos | aubergine parmigiana | chicken katsu curry | beef pho | spinach pie |
  seafood paella | butter chicken | shakshuka | bibimbap | pad see ew | crab linguine | pork dumplings | goat cheese tart
`);
const RESTAURANT_ADJ = list('Copper | Blue | Crooked | Golden | Little | Velvet | Wild | Salt | Hidden | Lazy | Green | Silver');
const RESTAURANT_NOUN = list('Kettle | Fig | Lantern | Anchor | Olive | Pelican | Spoon | Radish | Heron | Barrel | Lemon | Fox');
const STREET_FORMS = list('Street | Road | Lane | Avenue');
const SPORTS = list('football | basketball | squash | tennis | volleyball | five-a-side | badminton | netball');
const BODY_PARTS = list('ankle | knee | wrist | shoulder | hamstring | calf');
const SAVING_GOALS = list(`
  a deposit on a flat | a trip to Japan | a new laptop | our wedding | a second-hand campervan | an emergency fund |
  a sabbatical | a new bike | driving lessons | a piano
`);
const PET_SPOTS = list('laundry basket | bathroom sink | bottom drawer of the wardrobe | window box | shoe rack | spare room armchair');
const VET_ISSUES = list('slight heart murmur | ear infection | skin allergy | loose tooth | touch of hip dysplasia | eye infection');

function ordinal(day: number): string {
  const tens = day % 100;
  if (tens >= 11 && tens <= 13) return `${day}th`;
  return `${day}${['th', 'st', 'nd', 'rd'][day % 10] ?? 'th'}`;
}

/** A calendar date in one of three spoken forms: "14 March", "March 14", "the 14th of March". */
function dateText(r: Rng): string {
  const month = pick(r, MONTHS);
  const day = int(r, 1, 28);
  return pick(r, [`${day} ${month}`, `${month} ${day}`, `the ${ordinal(day)} of ${month}`]);
}
const clock = (r: Rng): string => `${int(r, 5, 21)}:${pick(r, ['00', '10', '15', '25', '30', '40', '45', '55'])}`;
const money = (r: Rng, lo: number, hi: number, step: number): string =>
  `${pick(r, ['£', '€', '$'])}${(int(r, Math.ceil(lo / step), Math.floor(hi / step)) * step).toLocaleString('en-GB')}`;

// ---------------------------------------------------------------------------------------------
// Fact types

interface Ctx {
  r: Rng;
  u: Unique;
  first: string;
}

interface QuestionDraft {
  kind: QuestionKind;
  texts: string[];
  answer: string;
  /** Indexes into the fact's turns. */
  evidence: number[];
}

interface Fact {
  type: string;
  topic: Topic;
  /** User turns, in conversation order. */
  turns: string[];
  questions: QuestionDraft[];
}

interface FactType {
  type: string;
  topic: Topic;
  /** Relative frequency: common life events recur in more conversations (harder distractors). */
  weight: number;
  make(c: Ctx): Fact;
}

const company = (c: Ctx): string => c.u.make(() => `${pick(c.r, STEMS)} ${pick(c.r, COMPANY_SUFFIXES)}`);
const personName = (c: Ctx): string => c.u.from(c.r, FIRST_NAMES);

const FACT_TYPES: FactType[] = [
  {
    type: 'pet',
    topic: 'pets',
    weight: 3,
    make({ r, u, first }) {
      const dog = chance(r, 0.65);
      const species = dog ? 'dog' : 'cat';
      const young = dog ? 'puppy' : 'kitten';
      const breed = pick(r, dog ? DOG_BREEDS : CAT_BREEDS);
      const pet = u.from(r, PET_NAMES);
      const [he, him] = chance(r, 0.5) ? ['he', 'him'] : ['she', 'her'];
      const turns = [
        pick(r, [
          `We finally adopted a ${breed} ${young}, and after a week of arguing we named ${him} ${pet}.`,
          `Big news at home: a little ${breed} ${young} called ${pet} moved in with us on Saturday.`,
          `We went to the shelter "just to look" and came home with a ${breed}. ${pet} is asleep on my feet as I type this.`,
          `My partner finally gave in and we got a ${breed} ${young}. The kids chose the name ${pet}, which I secretly love.`,
          `Meet ${pet}: ${he}'s our new ${breed}, ten weeks old, and ${he} has already chewed through one of my slippers.`,
          `The breeder called and the ${breed} ${young} is ours! ${capitalize(he)} comes home next week and we're calling ${him} ${pet}.`,
        ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'paraphrase',
          answer: pet,
          evidence: [0],
          texts: [
            `What is the name of ${first}'s ${species}?`,
            `What did ${first} call the new ${species}?`,
            `${first} got a ${species} recently. What is it called?`,
            `Which name did ${first}'s household give their ${species}?`,
          ],
        },
        {
          kind: 'entity',
          answer: breed,
          evidence: [0],
          texts: [`What breed is ${pet}?`, `What kind of ${species} is ${pet}?`, `${pet} is which breed of ${species}?`],
        },
      ];
      if (chance(r, 0.7)) {
        if (chance(r, 0.5)) {
          const issue = pick(r, VET_ISSUES);
          turns.push(
            pick(r, [
              `The vet found a ${issue} at the first check-up, so ${he} is on special food for now.`,
              `First vet visit done. Turns out it's a ${issue}, nothing dramatic, but we go back in a month.`,
            ]),
          );
          questions.push({
            kind: 'entity',
            answer: issue,
            evidence: [0, 1],
            texts: [
              `What did the vet find when ${pet} was examined?`,
              `What health issue does ${pet} have?`,
              `Is anything wrong with ${pet}'s health?`,
            ],
          });
        } else {
          const spot = pick(r, PET_SPOTS);
          turns.push(
            pick(r, [
              `We bought a fancy bed and ${he} ignores it completely; ${he} sleeps in the ${spot} every night.`,
              `Every night ${he} ends up curled in the ${spot}. I've given up fighting it.`,
            ]),
          );
          questions.push({
            kind: 'entity',
            answer: spot,
            evidence: [0, 1],
            texts: [`Where does ${pet} like to sleep?`, `Where does ${pet} spend the night?`],
          });
        }
      }
      return { type: 'pet', topic: 'pets', turns, questions };
    },
  },
  {
    type: 'order',
    topic: 'money',
    weight: 3,
    make({ r, u, first }) {
      const { item, kind } = pick(r, PRODUCTS);
      const shop = u.make(() => `${pick(r, STEMS)} ${pick(r, SHOP_SUFFIXES)}`);
      const code = u.make(() => `${letters(r, 2)}-${digits(r, 4)}`);
      const pending = chance(r, 0.6);
      const turns = [
        pending
          ? pick(r, [
              `I ordered ${article(item)} from ${shop} last week, order ${code}, and it still hasn't shipped.`,
              `Can you help me word a complaint? ${shop} still hasn't sent the ${item}. The order number is ${code}.`,
              `Writing this down so I don't lose it: ${code} is the ${shop} order for the ${item}.`,
            ])
          : pick(r, [
              `My new ${item} finally turned up. Order ${code} from ${shop} took almost three weeks, which is ridiculous.`,
              `I splurged and bought ${article(item)} from ${shop} (order ${code}). No regrets so far.`,
              `${shop} sent the ${item} in the wrong colour, so I'm returning order ${code}. Annoying.`,
            ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'exact',
          answer: item,
          evidence: [0],
          texts: [
            `What was ordered under order number ${code}?`,
            `Which item is order ${code} for?`,
            `${code}: what did ${first} buy with that order?`,
            `What product does order ${code} refer to?`,
          ],
        },
        {
          kind: 'exact',
          answer: shop,
          evidence: [0],
          texts: [`Which shop is order ${code} from?`, `Where did ${first} place order ${code}?`, `Which retailer handles order ${code}?`],
        },
        {
          kind: 'paraphrase',
          answer: item,
          evidence: [0],
          texts: [
            `Which ${kind} did ${first} buy online?`,
            `What ${kind} did ${first} purchase recently?`,
            `${first} mentioned a new ${kind}. What was it?`,
          ],
        },
      ];
      if (pending && chance(r, 0.4)) {
        const date = dateText(r);
        turns.push(
          pick(r, [
            `The tracking page now says the parcel arrives on ${date}, fingers crossed.`,
            `Customer service finally replied: delivery is expected on ${date}.`,
          ]),
        );
        questions.push({
          kind: 'temporal',
          answer: date,
          evidence: [0, 1],
          texts: [`When is ${first}'s ${kind} supposed to be delivered?`, `On what date should the ${kind} ${first} bought arrive?`],
        });
      }
      return { type: 'order', topic: 'money', turns, questions };
    },
  },
  {
    type: 'flight',
    topic: 'travel',
    weight: 3,
    make({ r, u, first }) {
      const flight = u.make(() => `${pick(r, AIRLINES)} ${int(r, 100, 2999)}`);
      const city = pick(r, CITIES);
      const date = dateText(r);
      const time = clock(r);
      const turns = [
        pick(r, [
          `We're on ${flight} to ${city} on ${date}, leaving at ${time}.`,
          `Booked it! ${flight} to ${city}, departing ${date}. Window seats, obviously.`,
          `My flight to ${city} is ${flight} on ${date}; I have to be at the airport by ${time}.`,
          `Finally treating myself to a trip: ${city}, flying out on ${date} with ${flight}.`,
          `Work is sending me to ${city}. The travel office put me on ${flight}, ${date}.`,
        ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'exact',
          answer: city,
          evidence: [0],
          texts: [
            `Where is flight ${flight} going?`,
            `What is the destination of ${flight}?`,
            `${first} is booked on ${flight}. Which city is that to?`,
            `Which city does ${first} reach on ${flight}?`,
          ],
        },
        {
          kind: 'paraphrase',
          answer: city,
          evidence: [0],
          texts: [`Which city is ${first} flying to?`, `Where is ${first} off to by plane?`, `What destination is ${first} flying to?`],
        },
      ];
      if (chance(r, 0.45)) {
        let later = dateText(r);
        while (later === date) later = dateText(r);
        turns.push(
          pick(r, [
            `Bad news: the airline cancelled our slot and moved us to ${later}, same flight number.`,
            `Change of plan, the ${city} trip got pushed. We now fly on ${later}.`,
            `They rebooked me onto ${later} because of a strike, so the trip starts later than planned.`,
          ]),
        );
        questions.push({
          kind: 'update',
          answer: later,
          evidence: [1],
          texts: [
            `After the schedule change, when does ${first} fly to ${city}?`,
            `What is the new departure date for ${first}'s ${city} trip?`,
            `When is ${first} flying to ${city} now?`,
          ],
        });
      } else {
        questions.push({
          kind: 'temporal',
          answer: date,
          evidence: [0],
          texts: [
            `When does ${first} fly to ${city}?`,
            `On what date does ${first} leave for ${city}?`,
            `What day is ${first}'s trip to ${city}?`,
          ],
        });
      }
      return { type: 'flight', topic: 'travel', turns, questions };
    },
  },
  {
    type: 'hotel',
    topic: 'travel',
    weight: 1.5,
    make({ r, u, first }) {
      const hotel = u.make(() => pick(r, HOTEL_FORMS)(pick(r, STEMS)));
      const city = pick(r, CITIES);
      const ref = u.make(() => `${letters(r, 2)}${digits(r, 2)}${letters(r, 2)}`);
      const nights = `${int(r, 2, 9)} nights`;
      const Hotel = capitalize(hotel);
      const turns = [
        pick(r, [
          `The hotel is sorted: ${hotel} in ${city}, ${nights}, confirmation ${ref}.`,
          `Found a lovely place in ${city} called ${hotel}. Booking reference ${ref}, ${nights}, breakfast included.`,
          `Saving this here: ${hotel} in ${city}, reservation ${ref}, checking in for ${nights}.`,
        ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'exact',
          answer: hotel,
          evidence: [0],
          texts: [
            `Which hotel is reservation ${ref} for?`,
            `What hotel does booking ${ref} belong to?`,
            `${ref}: which hotel is that confirmation for?`,
          ],
        },
        {
          kind: 'exact',
          answer: nights,
          evidence: [0],
          texts: [`How many nights is booking ${ref}?`, `For how long is reservation ${ref}?`],
        },
        { kind: 'entity', answer: city, evidence: [0], texts: [`In which city is ${hotel}?`, `Where is ${Hotel} located?`] },
        {
          kind: 'paraphrase',
          answer: hotel,
          evidence: [0],
          texts: [`Where will ${first} stay in ${city}?`, `What accommodation did ${first} book in ${city}?`],
        },
      ];
      return { type: 'hotel', topic: 'travel', turns, questions };
    },
  },
  {
    type: 'job',
    topic: 'work',
    weight: 2,
    make(c) {
      const { r, first } = c;
      const co = company(c);
      const role = pick(r, ROLES);
      const date = dateText(r);
      const turns = [
        pick(r, [
          `I accepted the offer from ${co}! I start as ${article(role)} on ${date}.`,
          `After six rounds of interviews I'm officially joining ${co} as their new ${role}. First day is ${date}.`,
          `Handed in my notice today. From ${date} I'll be ${article(role)} at ${co}.`,
          `Signed the contract with ${co} this morning: ${role}, starting ${date}, slightly better pay.`,
        ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'paraphrase',
          answer: co,
          evidence: [0],
          texts: [`Where is ${first}'s new job?`, `Which employer hired ${first}?`, `What company is ${first} going to work for?`],
        },
        {
          kind: 'paraphrase',
          answer: role,
          evidence: [0],
          texts: [`What position did ${first} accept?`, `What will ${first}'s job title be?`],
        },
        {
          kind: 'temporal',
          answer: date,
          evidence: [0],
          texts: [`When does ${first} start the new job?`, `What is ${first}'s first day at the new employer?`],
        },
      ];
      if (chance(r, 0.7)) {
        const manager = personName(c);
        const [she, She] = chance(r, 0.5) ? ['she', 'She'] : ['he', 'He'];
        turns.push(
          pick(r, [
            `Met my future boss, ${manager}, over a video call. Sharp, a bit intense, very into spreadsheets.`,
            `The person I'll report to is called ${manager}; apparently ${she} built the whole team from scratch.`,
            `My manager there will be ${manager}. ${She} used to work in ${pick(r, CITIES)} before moving here.`,
          ]),
        );
        questions.push(
          {
            kind: 'entity',
            answer: manager,
            evidence: [0, 1],
            texts: [`Who will ${first} report to at ${co}?`, `What is the name of ${first}'s manager at ${co}?`],
          },
          {
            kind: 'entity',
            answer: co,
            evidence: [0, 1],
            texts: [`Which company does ${manager} work for?`, `At which organisation is ${manager} a manager?`],
          },
        );
      }
      return { type: 'job', topic: 'work', turns, questions };
    },
  },
  {
    type: 'project',
    topic: 'work',
    weight: 1,
    make(c) {
      const { r, u, first } = c;
      const project = `Project ${u.from(r, PROJECT_NAMES)}`;
      const client = company(c);
      const date = dateText(r);
      const turns = [
        pick(r, [
          `I'm leading ${project} now. The client is ${client} and the deadline is ${date}, which is tight.`,
          `We kicked off ${project} for ${client} today; everything has to ship by ${date}.`,
          `${project} is my baby for the next few months: a rebuild for ${client}, due ${date}.`,
        ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'entity',
          answer: client,
          evidence: [0],
          texts: [`Who is the client for ${project}?`, `Which company is ${project} being built for?`],
        },
        {
          kind: 'paraphrase',
          answer: project,
          evidence: [0],
          texts: [`What is the name of the project ${first} is leading?`, `Which project is ${first} in charge of at work?`],
        },
      ];
      if (chance(r, 0.5)) {
        let later = dateText(r);
        while (later === date) later = dateText(r);
        turns.push(
          pick(r, [
            `The client asked for more features, so the launch slipped to ${later}.`,
            `The deadline moved again, it's ${later} now. Honestly a relief.`,
          ]),
        );
        questions.push({
          kind: 'update',
          answer: later,
          evidence: [1],
          texts: [`What is the current deadline for ${project}?`, `After the change, when does ${project} have to ship?`],
        });
      } else {
        questions.push({
          kind: 'temporal',
          answer: date,
          evidence: [0],
          texts: [`When is ${project} due?`, `What is the deadline for ${project}?`],
        });
      }
      return { type: 'project', topic: 'work', turns, questions };
    },
  },
  {
    type: 'medication',
    topic: 'health',
    weight: 2,
    make({ r, u, first }) {
      const { drug, condition, plain, doses, unit } = pick(r, DRUGS);
      const dose = `${pick(r, doses)} ${unit}`;
      const doctor = `Dr. ${u.from(r, DOCTOR_NAMES)}`;
      const turns = [
        pick(r, [
          `${doctor} put me on ${drug}, ${dose} every morning, for the ${condition}.`,
          `Started ${drug} today, ${dose} once a day. My GP, ${doctor}, thinks it'll sort out the ${condition}.`,
          `So the ${condition} is official. ${doctor} prescribed ${dose} of ${drug} and wants to see me again in a month.`,
        ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'exact',
          answer: dose,
          evidence: [0],
          texts: [
            `What dose of ${drug} is ${first} taking?`,
            `How much ${drug} was ${first} prescribed?`,
            `${capitalize(drug)}: what dosage is ${first} on?`,
          ],
        },
        {
          kind: 'paraphrase',
          answer: drug,
          evidence: [0],
          texts: [
            `What medicine did the doctor prescribe for ${first}?`,
            `Which medication was ${first} started on?`,
            `What pills is ${first} taking for the ${plain}?`,
          ],
        },
        {
          kind: 'entity',
          answer: drug,
          evidence: [0],
          texts: [`What did ${doctor} prescribe?`, `Which drug did ${doctor} put ${first} on?`],
        },
      ];
      if (chance(r, 0.45)) {
        const date = dateText(r);
        turns.push(
          pick(r, [
            `I have to go back for blood tests on ${date}, before breakfast, no coffee. Cruel.`,
            `The follow-up appointment is on ${date} at ${clock(r)}.`,
          ]),
        );
        if (chance(r, 0.4)) {
          let later = dateText(r);
          while (later === date) later = dateText(r);
          turns.push(
            pick(r, [`The clinic moved my check-up to ${later}.`, `Surgery called, they've rescheduled me for ${later} instead.`]),
          );
          questions.push({
            kind: 'update',
            answer: later,
            evidence: [2],
            texts: [`When is ${first}'s check-up after it was rescheduled?`, `What is the new date of ${first}'s follow-up appointment?`],
          });
        } else {
          questions.push({
            kind: 'temporal',
            answer: date,
            evidence: [1],
            texts: [`When is ${first}'s next medical appointment?`, `On what date does ${first} have to go back to the clinic?`],
          });
        }
      }
      return { type: 'medication', topic: 'health', turns, questions };
    },
  },
  {
    type: 'injury',
    topic: 'health',
    weight: 1,
    make(c) {
      const { r, first } = c;
      const sport = pick(r, SPORTS);
      const part = pick(r, BODY_PARTS);
      const physio = personName(c);
      const weeks = `${int(r, 3, 10)} weeks`;
      const turns = [
        pick(r, [
          `I hurt my ${part} playing ${sport}. The physio, ${physio}, says ${weeks} without running.`,
          `Ugh, sprained my ${part} at ${sport} on Sunday. My physio ${physio} gave me a sheet of exercises and says ${weeks} of rest.`,
          `${physio} at the sports clinic had a look at my ${part}: ${weeks} off ${sport}, minimum.`,
        ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'paraphrase',
          answer: part,
          evidence: [0],
          texts: [`Which part of ${first}'s body got injured?`, `What did ${first} injure recently?`],
        },
        {
          kind: 'entity',
          answer: weeks,
          evidence: [0],
          texts: [`How long did ${physio} tell ${first} to rest?`, `What recovery time did ${physio} give ${first}?`],
        },
        { kind: 'paraphrase', answer: sport, evidence: [0], texts: [`What game was ${first} playing when the injury happened?`] },
      ];
      return { type: 'injury', topic: 'health', turns, questions };
    },
  },
  {
    type: 'savings',
    topic: 'money',
    weight: 1,
    make({ r, first }) {
      const amount = money(r, 50, 900, 25);
      const goal = pick(r, SAVING_GOALS);
      const turns = [
        pick(r, [
          `I've set up a standing order of ${amount} a month into a savings pot for ${goal}.`,
          `New rule: ${amount} goes straight into savings every payday. The goal is ${goal}.`,
          `If I keep putting away ${amount} each month, ${goal} should be doable in about two years.`,
        ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'paraphrase',
          answer: amount,
          evidence: [0],
          texts: [`How much does ${first} save every month?`, `What amount does ${first} set aside monthly?`],
        },
        {
          kind: 'paraphrase',
          answer: goal,
          evidence: [0],
          texts: [`What is ${first} saving up for?`, `What's the goal of ${first}'s savings plan?`],
        },
      ];
      if (chance(r, 0.4)) {
        let more = money(r, 50, 900, 25);
        while (more === amount) more = money(r, 50, 900, 25);
        turns.push(
          pick(r, [
            `Got a small pay rise, so the monthly savings transfer is now ${more}.`,
            `I had to adjust the budget: from now on it's ${more} a month into the pot.`,
          ]),
        );
        questions.push({
          kind: 'update',
          answer: more,
          evidence: [1],
          texts: [`How much does ${first} save per month after changing the plan?`, `What is ${first}'s monthly savings amount now?`],
        });
      }
      return { type: 'savings', topic: 'money', turns, questions };
    },
  },
  {
    type: 'mortgage',
    topic: 'money',
    weight: 1,
    make({ r, u, first }) {
      const bank = u.make(() => `${pick(r, STEMS)} ${pick(r, BANK_SUFFIXES)}`);
      const rate = (3 + r() * 2.4).toFixed(2);
      const years = String(pick(r, [2, 3, 5, 10]));
      const turns = [
        pick(r, [
          `The mortgage got approved with ${bank}: ${rate}% fixed for ${years} years. I may cry.`,
          `We went with ${bank} in the end, ${rate} percent, fixed for ${years} years. Signing on Thursday.`,
        ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'entity',
          answer: rate,
          evidence: [0],
          texts: [`What interest rate did ${bank} give ${first}?`, `At what rate is ${first}'s home loan with ${bank}?`],
        },
        {
          kind: 'paraphrase',
          answer: bank,
          evidence: [0],
          texts: [`Which lender is ${first}'s home loan with?`, `Who is financing ${first}'s house purchase?`],
        },
      ];
      return { type: 'mortgage', topic: 'money', turns, questions };
    },
  },
  {
    type: 'instrument',
    topic: 'hobbies',
    weight: 1,
    make(c) {
      const { r, first } = c;
      const instrument = pick(r, INSTRUMENTS);
      const teacher = personName(c);
      const day = pick(r, WEEKDAYS);
      const turns = [
        pick(r, [
          `I've started ${instrument} lessons with a teacher called ${teacher}, every ${day} evening.`,
          `Guess who's learning the ${instrument}? Me! ${teacher} comes over on ${day}s and is very patient.`,
          `My ${day} evenings now belong to ${teacher}, who is trying to teach me the ${instrument}. The neighbours hate it.`,
        ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'paraphrase',
          answer: instrument,
          evidence: [0],
          texts: [
            `What musical instrument is ${first} learning?`,
            `Which instrument did ${first} take up?`,
            `What does ${first} practise in music class?`,
          ],
        },
        {
          kind: 'entity',
          answer: instrument,
          evidence: [0],
          texts: [`What does ${teacher} teach ${first}?`, `Which instrument does ${teacher} teach?`],
        },
        { kind: 'paraphrase', answer: teacher, evidence: [0], texts: [`Who is ${first}'s music teacher?`] },
      ];
      if (chance(r, 0.35)) {
        let moved = pick(r, WEEKDAYS);
        while (moved === day) moved = pick(r, WEEKDAYS);
        turns.push(
          pick(r, [
            `Small change: lessons are on ${moved}s from now on, the old slot stopped working for us.`,
            `We had to move the lessons to ${moved} evenings because of my new shifts.`,
          ]),
        );
        questions.push({
          kind: 'update',
          answer: moved,
          evidence: [1],
          texts: [
            `Which weekday are ${first}'s music lessons on now?`,
            `After the schedule change, on what day does ${first} have lessons?`,
          ],
        });
      } else {
        questions.push({
          kind: 'temporal',
          answer: day,
          evidence: [0],
          texts: [`On which day of the week does ${first} have music lessons?`],
        });
      }
      return { type: 'instrument', topic: 'hobbies', turns, questions };
    },
  },
  {
    type: 'race',
    topic: 'hobbies',
    weight: 1,
    make({ r, first }) {
      const city = pick(r, CITIES);
      const time = `${int(r, 1, 2)}:${String(int(r, 0, 59)).padStart(2, '0')}:${String(int(r, 0, 59)).padStart(2, '0')}`;
      const turns = [
        pick(r, [
          `Ran the ${city} half marathon on Sunday in ${time}! Personal best by four minutes.`,
          `Finished the ${city} half in ${time}. Legs destroyed, heart full.`,
        ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'paraphrase',
          answer: time,
          evidence: [0],
          texts: [`How fast did ${first} complete the 21 km race?`, `What was ${first}'s finishing time in the long-distance run?`],
        },
        { kind: 'entity', answer: time, evidence: [0], texts: [`What time did ${first} run in ${city}?`] },
        { kind: 'paraphrase', answer: city, evidence: [0], texts: [`Where did ${first} run a race recently?`] },
      ];
      return { type: 'race', topic: 'hobbies', turns, questions };
    },
  },
  {
    type: 'wedding',
    topic: 'family',
    weight: 1,
    make(c) {
      const { r, u, first } = c;
      const relative = pick(r, ['sister', 'brother', 'cousin']);
      const name = personName(c);
      const place = pick(r, WEDDING_PLACES);
      const venue = u.make(() => `${pick(r, STEMS)} ${pick(r, VENUE_FORMS)}`);
      const date = dateText(r);
      const turns = [
        pick(r, [
          `My ${relative} ${name} just got engaged! We're all over the moon.`,
          `Family news: ${name}, my ${relative}, is getting married!`,
          `${name} (my ${relative}) proposed to their partner last night, and it was a yes.`,
        ]),
        pick(r, [
          `They've booked ${venue} in ${place} for ${date}, so I need an outfit, urgently.`,
          `The ceremony will be at ${venue} in ${place} on ${date}. I'm giving a speech, help.`,
        ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'paraphrase',
          answer: name,
          evidence: [0],
          texts: [`Who in ${first}'s family is getting married?`, `Which relative of ${first} got engaged?`],
        },
        {
          kind: 'entity',
          answer: place,
          evidence: [0, 1],
          texts: [`Where is ${name}'s wedding going to be?`, `In which place will ${name} get married?`],
        },
        { kind: 'entity', answer: venue, evidence: [0, 1], texts: [`What venue did ${name} book for the wedding?`] },
        {
          kind: 'temporal',
          answer: date,
          evidence: [0, 1],
          texts: [`When is ${name}'s wedding?`, `On what date does ${name} get married?`],
        },
      ];
      return { type: 'wedding', topic: 'family', turns, questions };
    },
  },
  {
    type: 'birthday',
    topic: 'family',
    weight: 1,
    make(c) {
      const { r, first } = c;
      const son = chance(r, 0.5);
      const child = son ? 'son' : 'daughter';
      const [He, he] = son ? ['He', 'he'] : ['She', 'she'];
      const kid = personName(c);
      const age = String(int(r, 3, 12));
      const date = dateText(r);
      const theme = pick(r, PARTY_THEMES);
      // The theme comes either with the name or in a later turn that does not repeat it.
      const themeLater = chance(r, 0.5);
      const turns = [
        themeLater
          ? pick(r, [
              `My ${child} ${kid} turns ${age} on ${date}. Where did the time go?`,
              `${kid}'s birthday is coming up, ${date}. ${He}'ll be ${age}, which feels impossible.`,
            ])
          : pick(r, [
              `My ${child} ${kid} turns ${age} on ${date} and wants a ${theme} party. Send help.`,
              `${kid}'s birthday is coming up, ${date}. ${He}'ll be ${age} and has asked for a ${theme} cake.`,
              `Can't believe my little ${kid} will be ${age} on ${date}. The ${theme} decorations are already ordered and ${he} checks on them daily.`,
            ]),
      ];
      if (themeLater) {
        turns.push(
          pick(r, [
            `Party planning update: ${he} has decided on a ${theme} theme, so I'm making a cake shaped like one. Wish me luck.`,
            `The birthday party will be ${theme}-themed, apparently non-negotiable. I've ordered costumes for twelve kids.`,
          ]),
        );
      }
      const questions: QuestionDraft[] = [
        {
          kind: 'paraphrase',
          answer: age,
          evidence: [0],
          texts: [`How old is ${first}'s ${child} turning?`, `What age will ${first}'s ${child} be after the next birthday?`],
        },
        {
          kind: 'temporal',
          answer: date,
          evidence: [0],
          texts: [`When is ${kid}'s birthday?`, `On what date does ${kid} celebrate a birthday?`],
        },
        {
          kind: 'entity',
          answer: theme,
          evidence: themeLater ? [0, 1] : [0],
          texts: [`What kind of party does ${kid} want?`, `Which theme did ${kid} choose for the celebration?`],
        },
      ];
      return { type: 'birthday', topic: 'family', turns, questions };
    },
  },
  {
    type: 'lease',
    topic: 'home',
    weight: 1,
    make(c) {
      const { r, u, first } = c;
      const hood = u.make(() => pick(r, HOOD_FORMS)(pick(r, STEMS)));
      const rent = money(r, 700, 2400, 25);
      const landlord = personName(c);
      const turns = [
        pick(r, [
          `We signed the lease on a flat in ${hood}: ${rent} a month, and the landlord is called ${landlord}.`,
          `Moving day is sorted! Two-bed in ${hood}, ${rent} per month. ${landlord}, who owns it, seems nice.`,
          `It's official, we're renting in ${hood}. ${rent} monthly, which hurts, but ${landlord} is letting us keep the cat.`,
        ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'paraphrase',
          answer: rent,
          evidence: [0],
          texts: [`How much rent does ${first} pay?`, `What does ${first}'s new home cost each month?`],
        },
        {
          kind: 'paraphrase',
          answer: hood,
          evidence: [0],
          texts: [`Which neighbourhood did ${first} move to?`, `What part of town is ${first}'s new place in?`],
        },
        { kind: 'entity', answer: rent, evidence: [0], texts: [`How much does ${first} pay ${landlord} every month?`] },
      ];
      if (chance(r, 0.4)) {
        let raised = money(r, 700, 2600, 25);
        while (raised === rent) raised = money(r, 700, 2600, 25);
        turns.push(
          pick(r, [
            `Letter from the landlord today: the rent goes up to ${raised} from next month. Brilliant.`,
            `We renegotiated the contract, so the monthly payment is ${raised} from now on.`,
          ]),
        );
        questions.push({
          kind: 'update',
          answer: raised,
          evidence: [1],
          texts: [`How much rent will ${first} pay after the change?`, `What is ${first}'s monthly housing cost now?`],
        });
      }
      return { type: 'lease', topic: 'home', turns, questions };
    },
  },
  {
    type: 'repair',
    topic: 'home',
    weight: 1.5,
    make({ r, u, first }) {
      const problem = pick(r, PROBLEMS);
      const code = u.make(() => `${pick(r, ['INC', 'REQ', 'TCK', 'SR'])}-${digits(r, 5)}`);
      const date = dateText(r);
      const turns = [
        pick(r, [
          `The ${problem} is driving me mad. Ticket ${code} with the letting agency, and they promised a technician on ${date}.`,
          `Reported the ${problem} to building management this morning, reference ${code}. Someone is coming on ${date}.`,
          `For my records: ticket ${code} covers the ${problem}; repair visit booked for ${date}.`,
        ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'exact',
          answer: problem,
          evidence: [0],
          texts: [
            `What problem was reported under ticket ${code}?`,
            `What is ticket ${code} about?`,
            `Which repair does reference ${code} cover?`,
          ],
        },
      ];
      if (chance(r, 0.45)) {
        let later = dateText(r);
        while (later === date) later = dateText(r);
        turns.push(
          pick(r, [`The repair visit got pushed to ${later}, of course.`, `Agency called: the technician can only come on ${later} now.`]),
        );
        questions.push({
          kind: 'update',
          answer: later,
          evidence: [1],
          texts: [
            `When is the repair visit at ${first}'s place now?`,
            `After the agency rescheduled, when does the technician come to ${first}'s?`,
          ],
        });
      } else {
        questions.push({
          kind: 'temporal',
          answer: date,
          evidence: [0],
          texts: [`When is the technician coming to ${first}'s flat?`, `What date is the repair visit at ${first}'s place?`],
        });
      }
      return { type: 'repair', topic: 'home', turns, questions };
    },
  },
  {
    type: 'car',
    topic: 'cars',
    weight: 1,
    make({ r, u, first }) {
      const car = pick(r, CARS);
      const year = String(int(r, 2009, 2022));
      const plate = u.make(() =>
        pick(r, [
          () => `${letters(r, 2)}${digits(r, 2)} ${letters(r, 3)}`,
          () => `${letters(r, 2)}-${digits(r, 3)}-${letters(r, 2)}`,
          () => `${letters(r, 1)}-${letters(r, 2)} ${digits(r, 4)}`,
        ])(),
      );
      const turns = [
        pick(r, [
          `Picked up the car today: a ${year} ${car}, plate ${plate}. It smells like old coffee but runs great.`,
          `We finally replaced the old banger with a second-hand ${car} from ${year}. Registration ${plate}.`,
          `Insurance needs the plate, so noting it here: ${plate}, the ${car} we just bought.`,
        ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'exact',
          answer: car,
          evidence: [0],
          texts: [`Which car has the registration ${plate}?`, `What vehicle is plate ${plate}?`, `${plate}: what model is that?`],
        },
        {
          kind: 'paraphrase',
          answer: car,
          evidence: [0],
          texts: [`What car did ${first} buy?`, `What does ${first} drive these days?`, `Which vehicle did ${first} get recently?`],
        },
      ];
      return { type: 'car', topic: 'cars', turns, questions };
    },
  },
  {
    type: 'garage',
    topic: 'cars',
    weight: 1,
    make({ r, u, first }) {
      const garage = u.make(() => `${pick(r, STEMS)} ${pick(r, ['Motors', 'Autocare', 'Garage', 'Car Clinic'])}`);
      const part = pick(r, CAR_PARTS);
      const cost = money(r, 150, 2200, 10);
      const turns = [
        pick(r, [
          `${garage} quoted me ${cost} to replace the ${part}. Daylight robbery?`,
          `The car's at ${garage} again; the ${part} is shot and it's going to be ${cost}.`,
        ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'paraphrase',
          answer: cost,
          evidence: [0],
          texts: [`How much will fixing ${first}'s car cost?`, `What price was ${first} given for the vehicle repair?`],
        },
        {
          kind: 'entity',
          answer: part,
          evidence: [0],
          texts: [`What does ${garage} need to replace on ${first}'s car?`, `What part is ${garage} fixing?`],
        },
        { kind: 'paraphrase', answer: garage, evidence: [0], texts: [`Which mechanic is repairing ${first}'s car?`] },
      ];
      return { type: 'garage', topic: 'cars', turns, questions };
    },
  },
  {
    type: 'allergy',
    topic: 'food',
    weight: 1,
    make({ r, first }) {
      const allergen = pick(r, ALLERGENS);
      const loved = pick(r, LOVED_FOODS);
      const turns = [
        pick(r, [
          `Found out I'm allergic to ${allergen}, which is tragic because I love ${loved}.`,
          `The allergy test came back positive for ${allergen}. Goodbye, ${loved}.`,
          `Turns out my body really can't handle ${allergen}. The doctor says to cut it out completely.`,
        ]),
      ];
      const questions: QuestionDraft[] = [
        {
          kind: 'paraphrase',
          answer: allergen,
          evidence: [0],
          texts: [`What can't ${first} eat?`, `Which food does ${first} have to avoid?`, `What ingredient makes ${first} ill?`],
        },
      ];
      return { type: 'allergy', topic: 'food', turns, questions };
    },
  },
  {
    type: 'restaurant',
    topic: 'food',
    weight: 1,
    make({ r, u, first }) {
      const restaurant = u.make(() => `the ${pick(r, RESTAURANT_ADJ)} ${pick(r, RESTAURANT_NOUN)}`);
      const street = u.make(() => `${pick(r, STEMS)} ${pick(r, STREET_FORMS)}`);
      const dish = pick(r, DISHES);
      const Restaurant = capitalize(restaurant);
      // The dish comes either with the name or in a later turn that does not repeat it.
      const dishLater = chance(r, 0.5);
      const turns = [
        dishLater
          ? pick(r, [
              `Our go-to place is ${restaurant} on ${street}. Tiny, loud, always full.`,
              `If you're ever near ${street}, try ${restaurant}. We've been going there for years.`,
            ])
          : pick(r, [
              `Our go-to place is ${restaurant} on ${street}; I always get the ${dish}.`,
              `If you're ever near ${street}, try ${restaurant}. Their ${dish} is the best thing I've eaten this year.`,
              `Date night at ${restaurant} on ${street} again. Same table, same ${dish}, zero regrets.`,
            ]),
      ];
      if (dishLater) {
        turns.push(
          pick(r, [
            `Went back to our usual place last night. I never even look at the menu, it's the ${dish} every time.`,
            `Dinner at the usual spot again. The ${dish} there is honestly unbeatable.`,
          ]),
        );
      }
      const questions: QuestionDraft[] = [
        {
          kind: 'entity',
          answer: dish,
          evidence: dishLater ? [0, 1] : [0],
          texts: [`What does ${first} usually order at ${restaurant}?`, `Which dish does ${first} recommend at ${restaurant}?`],
        },
        { kind: 'entity', answer: street, evidence: [0], texts: [`Where is ${Restaurant}?`, `On which street is ${restaurant}?`] },
        {
          kind: 'paraphrase',
          answer: restaurant,
          evidence: [0],
          texts: [`Which restaurant does ${first} keep going back to?`, `What is ${first}'s favourite place to eat out?`],
        },
      ];
      return { type: 'restaurant', topic: 'food', turns, questions };
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Filler: topic chatter, decoys (same fact types about other people), small talk, assistant replies

const CHATTER: Record<Topic, string[]> = {
  travel: list(`
    I always overpack. Three pairs of shoes for a weekend, every single time. |
    Do you have tips for sleeping on planes? I never manage more than an hour. |
    Airports make me weirdly anxious, even when I'm there hours early. |
    One day I'd love to cross Europe by train instead of flying everywhere. |
    Is travel insurance worth it for short trips, in your opinion? |
    My passport expires next year, I should renew it before I forget. |
    I can never decide between a city break and a beach holiday.
  `),
  work: list(`
    Work has been nothing but meetings this week. I haven't done anything useful. |
    How do people stay focused in open-plan offices? |
    My team is hiring and I've been asked to interview people, which I've never done. |
    I need to ask for a raise but I hate those conversations. |
    Remote Fridays are the best thing my employer ever introduced. |
    My inbox has over two thousand unread emails and I've made peace with it.
  `),
  pets: list(`
    Do dogs get bored when everyone's out at work all day? |
    The neighbour's cat keeps sleeping on our car roof, it's very smug about it. |
    Pet insurance is so expensive, is it even worth it? |
    I keep watching videos of rescued animals and crying at my desk. |
    How often should a young animal see the vet in the first year? |
    Is it cruel to keep a cat indoors all the time?
  `),
  health: list(`
    I've been sleeping badly again, waking up at four for no reason. |
    Trying to drink more water, but I forget until it's evening. |
    Do standing desks actually help with back pain? |
    I booked a massage for the first time in years and I already feel better. |
    My step count this week is embarrassing. |
    Waiting rooms at the clinic are the most boring places on earth.
  `),
  money: list(`
    Prices at the supermarket are wild right now. |
    I really should make a proper budget, but spreadsheets make me sleepy. |
    Is it better to pay off a credit card first or build up savings? |
    Online shopping at midnight is my worst habit. |
    My banking app redesigned everything and now I can't find anything. |
    Parcels always seem to arrive exactly when I pop out for ten minutes.
  `),
  hobbies: list(`
    I want a hobby that doesn't involve a screen. Any ideas? |
    I've been trying to read more; I finished two novels this month. |
    Running in the rain is underrated, honestly. |
    I signed up for a pottery class but haven't actually gone yet. |
    Practising something every day is harder than it sounds. |
    Music lessons as an adult are humbling.
  `),
  family: list(`
    Family group chats are chaos. Two hundred messages about one barbecue. |
    My parents want us to visit more often and I feel guilty. |
    Planning anything with relatives is like herding cats. |
    The kids have a school play next month and I've been asked to sew a costume. |
    My grandmother just learned video calls and now rings every day. |
    Weddings and birthdays all seem to land in the same month in our family.
  `),
  home: list(`
    Our flat is always too cold in the mornings. |
    I need to declutter the spare room, it's basically a storage unit. |
    Houseplants keep dying on me, even the "unkillable" ones. |
    The neighbours have been renovating for months; drilling at eight every day. |
    Thinking of painting the living room green. Too bold? |
    Letting agencies never answer the phone, do they?
  `),
  cars: list(`
    Fuel prices are painful at the moment. |
    Parking in the city centre is basically impossible. |
    Is an electric car worth it if you mostly drive short distances? |
    I need to learn how to check tyre pressure properly. |
    The car rattles over bumps, which is never a good sign. |
    Car insurance renewal letters are a special kind of horror.
  `),
  food: list(`
    I'm trying to cook at home more instead of ordering takeaway. |
    What's a quick dinner I can make in fifteen minutes? |
    I finally learned to bake proper bread and now I'm obsessed. |
    Meal prepping on Sundays saves my whole week. |
    I can't decide whether to try a vegetarian month. |
    Reading ingredient labels in the supermarket takes me forever these days.
  `),
};

const SMALL_TALK = list(`
  Anyway, enough about that. The weather has been miserable all week. |
  Sorry, I got distracted, my phone keeps buzzing. |
  Thanks, that's really helpful. |
  Haha, fair enough. |
  I'm so tired today, it's been one of those weeks. |
  Let me think about that and come back to it. |
  Okay, that makes sense. |
  Honestly I just needed to get that off my chest. |
  Good point, I hadn't thought of it that way.
`);

/** A turn stating a fact of the topic's kind about someone else: a distractor, never asked about. */
const DECOYS: Record<Topic, ((c: Ctx) => string)[]> = {
  travel: [
    (c) =>
      `My brother is flying ${c.u.make(() => `${pick(c.r, AIRLINES)} ${int(c.r, 100, 2999)}`)} to ${pick(c.r, CITIES)} next week, poor thing has a 6am start.`,
    (c) =>
      `My parents stayed at ${c.u.make(() => pick(c.r, HOTEL_FORMS)(pick(c.r, STEMS)))} in ${pick(c.r, CITIES)} last year and loved it.`,
  ],
  work: [
    (c) => `A friend of mine just joined ${company(c)}; apparently the canteen is amazing.`,
    (c) => `My old colleague ${personName(c)} became a team lead at ${company(c)}.`,
  ],
  pets: [
    (c) => `My neighbour just got a ${pick(c.r, DOG_BREEDS)} called ${c.u.from(c.r, PET_NAMES)}, and now everyone on our street wants one.`,
    (c) => `My sister's cat ${c.u.from(c.r, PET_NAMES)} has to go on a diet, the vet was very stern about it.`,
  ],
  health: [
    (c) => {
      const d = pick(c.r, DRUGS);
      return `My dad has been on ${d.drug} for his ${d.condition} for years, he swears by it.`;
    },
  ],
  money: [
    (c) =>
      `My flatmate's order ${c.u.make(() => `${letters(c.r, 2)}-${digits(c.r, 4)}`)} from ${c.u.make(() => `${pick(c.r, STEMS)} ${pick(c.r, SHOP_SUFFIXES)}`)} got lost too, so it's not just me.`,
    (c) => `My brother got his mortgage with ${c.u.make(() => `${pick(c.r, STEMS)} ${pick(c.r, BANK_SUFFIXES)}`)} and regrets it.`,
  ],
  hobbies: [(c) => `My friend ${personName(c)} plays the ${pick(c.r, INSTRUMENTS)} in a folk band, they're surprisingly good.`],
  family: [(c) => `My cousin ${personName(c)} had a baby girl last month, so we're all very soppy right now.`],
  home: [(c) => `The people upstairs had a leak as well; their ticket number was ${c.u.make(() => `REQ-${digits(c.r, 5)}`)}.`],
  cars: [(c) => `My colleague drives a ${pick(c.r, CARS)} and it's always at the garage.`],
  food: [
    (c) =>
      `Everyone keeps recommending ${c.u.make(() => `the ${pick(c.r, RESTAURANT_ADJ)} ${pick(c.r, RESTAURANT_NOUN)}`)}, but I've never been.`,
  ],
};

const REPLIES: Record<Topic, string[]> = {
  travel: list(`
    That sounds like a great trip. Do you want help putting together a packing list? |
    Travel days can be long; an early night before the flight helps a lot. |
    Keep a copy of your bookings offline in case the airport wifi lets you down. |
    Exciting! Have you looked at how to get from the airport into the centre? |
    I can help plan a rough itinerary once you know what you'd like to see.
  `),
  work: list(`
    That's a big step. How are you feeling about it? |
    That sounds demanding. Try to block some focus time in your calendar. |
    New roles are a lot to take in; the first few weeks are mostly listening. |
    It might help to write down what you want to achieve in the next three months.
  `),
  pets: list(`
    Animals make a home feel so much warmer. How is everyone adjusting? |
    The first weeks are all about routine: regular meals, walks and lots of sleep. |
    Make sure the vaccinations are up to date and the microchip details are registered. |
    That's adorable. Pets really do have their own personalities.
  `),
  health: list(`
    I'm sorry you're dealing with that. Be gentle with yourself while you adjust. |
    Good that you got it checked. Note any side effects to mention at the next visit. |
    Rest and consistency usually matter more than anything else for recovery. |
    That sounds frustrating. Small habits do add up, though.
  `),
  money: list(`
    Good idea to keep track of that. Screenshots of receipts can save you later. |
    That's a sensible plan. Automating it makes it much easier to stick to. |
    Delays are annoying; a short written complaint usually gets things moving. |
    Nice, that's a solid decision if the numbers work for you.
  `),
  hobbies: list(`
    That's a great way to switch off after work. Are you enjoying it so far? |
    Progress feels slow at first and then suddenly it clicks. |
    Brilliant! Celebrate that properly. |
    Having a fixed slot in the week makes a hobby much easier to keep up.
  `),
  family: list(`
    What lovely news! Everyone must be thrilled. |
    Family events take a lot of organising; a shared checklist can help. |
    That sounds like it's going to be a memorable day. |
    Aw, that's sweet. Kids grow up so fast.
  `),
  home: list(`
    Moving is stressful, but it sounds like a good choice. |
    Keep every message with the agency in writing, just in case. |
    That's annoying. Hopefully they fix it properly this time. |
    A home that feels comfortable makes such a difference.
  `),
  cars: list(`
    Congrats on the new wheels! Ask for the full service history if you can. |
    Repairs always come at the worst time. It might be worth getting a second quote. |
    Cars are expensive to keep running; a small monthly buffer helps. |
    Sounds like a practical choice for everyday driving.
  `),
  food: list(`
    Food is such a big part of life, that's a tough one. |
    That sounds delicious. I'm a little jealous. |
    Having a favourite spot is the best; the staff get to know you. |
    Reading labels gets easier with practice, I promise.
  `),
};

const GENERIC_REPLIES = list(`
  Got it. | Thanks for sharing that with me. | That makes sense. Anything else on your mind? | Understood, I'll keep that in mind. |
  Sounds like a busy week! | Ha, I hear you. | No problem at all. | Happy to help whenever you need.
`);

const INTROS: ((full: string, first: string) => string)[] = [
  (full) => `Hi, I'm ${full}.`,
  (_full, first) => `Hey there, ${first} here.`,
  (full) => `Hello! My name is ${full}.`,
  (full) => `${full} here, nice to meet you.`,
];
const HOOKS = list(`
  I could use a sounding board today. | Lots going on in my life right now. | I want to keep track of a few things. |
  Long week, I need to talk some stuff through. | I've got a few updates and some questions.
`);
const INTRO_REPLIES: ((first: string) => string)[] = [
  (first) => `Nice to meet you, ${first}! What's on your mind?`,
  (first) => `Hi ${first}, happy to help. Go ahead.`,
  (first) => `Hello ${first}! I'm all ears.`,
];
/** Occasionally the user names themselves again mid-conversation (only then does a fact turn carry the name). */
const SELF_MENTIONS: ((first: string) => string)[] = [
  (first) => `Okay, ${first} with an update. `,
  (first) => `It's ${first} again. `,
  (first) => `${first} here, quick one. `,
];

/** An assistant reply on the turn's topic (sometimes generic), not repeating one already given in this conversation. */
function reply(r: Rng, topic: Topic | null, first: string, given: Set<string>): string {
  let text = '';
  for (let attempt = 0; attempt < 20; attempt++) {
    text = topic && chance(r, 0.8) ? pick(r, REPLIES[topic]) : pick(r, GENERIC_REPLIES);
    if (!given.has(text)) break;
  }
  given.add(text);
  if (chance(r, 0.2)) text = `${first}, ${text.charAt(0).toLowerCase()}${text.slice(1)}`;
  return text;
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

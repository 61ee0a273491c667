/**
 * Small closed word lists the extractor needs on top of compromise's tags. They cover function words
 * and deliberately vague nouns; everything open-class comes from compromise's lexicon and tagger.
 */

const set = (words: string): ReadonlySet<string> => new Set(words.split(/\s+/u).filter((word) => word.length > 0));

/** First-person pronouns: attributed to the speaker when one is given. */
export const FIRST_PERSON = set('i me myself we us ourselves');
/** First-person possessive determiners: "my sister" -> speaker has sister. */
export const FIRST_PERSON_POSSESSIVE = set('my our');
/** Third-person pronouns resolved to the most recent person entity. */
export const MALE_PRONOUNS = set('he him himself');
export const FEMALE_PRONOUNS = set('she her herself');
export const PLURAL_PRONOUNS = set('they them themselves');
/** Kinship and companion nouns compromise does not tag #Actor (it does "sister", "wife", "boss"). */
export const KIN_NOUNS = set(
  'cousin cousins nephew niece aunt uncle grandpa grandma granddad grandad nan fiance fiancee partner roommate flatmate',
);
/**
 * Last words that make a capitalised name an organisation ("Harbor Foods", "Uppsala University",
 * "Northgate Holdings Ltd"): the generic English heads of company, institution and team names.
 */
export const ORGANIZATION_HEADS = set(`
  inc corp corporation co ltd llc plc gmbh ag sa nv bv lp llp company companies group holdings partners ventures capital
  bank bancorp trust fund funds insurance assurance exchange securities investments finance financial
  foods food beverages brewery bakery farms restaurants hotels airlines airways air rail railways motors automotive
  energy power utilities oil gas petroleum mining minerals metals steel chemicals pharmaceuticals pharma biotech therapeutics
  health healthcare hospital clinic labs laboratories robotics systems technologies technology tech software solutions
  analytics data digital networks network telecom communications media news press publishing records pictures studios studio
  entertainment games logistics freight shipping transport construction engineering industries enterprises manufacturing
  retail stores consulting services agency associates
  university college institute academy school foundation association society council committee commission ministry
  department bureau authority agency union federation league club fc united rescue church museum library orchestra
`);
/** Last words that make a capitalised name a place ("Queen Street", "Fifth Avenue", "Lake Geneva" is first-word). */
export const PLACE_HEADS = set(`
  street st avenue ave road rd boulevard lane drive square plaza park bridge river lake mountain mountains hills valley
  bay island islands beach coast county province state district quarter harbour harbor port airport station
`);
/** Common nouns naming a kind of organisation, before or after its name ("the startup Lumio", "the Acme company"). */
export const ORGANIZATION_KINDS = set(`
  company firm startup start-up business chain brand retailer maker manufacturer supplier vendor carrier airline bank
  lender insurer charity nonprofit agency band team club restaurant cafe bar shop store bakery hotel label publisher
  university college school hospital clinic newspaper magazine broadcaster network group
`);
/** Common nouns naming a kind of place ("the city of Porto", "the town Arles"). */
export const PLACE_KINDS = set('city town village country state province region island capital suburb neighbourhood neighborhood district');

/** Common nouns naming a kind of product or work ("the series Lantern Bay", "the app Tidewise"). */
export const PRODUCT_KINDS = set(
  'series show film movie book novel album song podcast game app application phone model car drone device tool platform',
);

/** A word right before a capitalised name that says it is an organisation ("works at Vexa", "joined Lumio"). */
export const ORGANIZATION_CUES = set('at join joined joins joining rejoined leave left leaves leaving quit quits');

/**
 * Verbs that take a whole clause as their object ("said Bob moved to Rome", "I think Alice left Acme"):
 * a past form after their object opens that clause, it does not modify the noun before it.
 */
export const CLAUSE_TAKING_VERBS = set(`
  say tell think know believe hear feel hope guess reckon suspect notice see mean realize realise assume
  expect learn read claim report announce confirm deny admit argue find show state write explain mention
`);

/** Verbs that take a recipient before the thing given ("gave me a copy", "sent Alice the photos"). */
export const DATIVE_VERBS = set(
  'give send show offer lend hand bring pass pay owe tell teach write email mail text buy promise sell cook read',
);

/** Past forms that give the noun before them its name ("a band called The Night Owls"). */
export const NAMING_PARTICIPLES = set('called named dubbed titled nicknamed entitled');

/** Relative pronouns that point back at the noun phrase just before them ("Alice, who lives in Paris, …"). */
export const RELATIVE_PRONOUNS = set('who which that');

/** Words opening a hypothetical clause: nothing up to the next comma is stated as fact. */
export const CONDITIONALS = set('if unless whether suppose supposing assuming');

/** Words that open a clause; compromise sometimes tags a capitalised one as part of a name ("Unless Bob"). */
export const CLAUSE_OPENERS = set('if unless whether when while after before because since although though once until and or but so then');

/** Prepositions compromise tags as adjectives before a name ("a farm near Tucson", "a warehouse outside Lyon"). */
export const MISTAGGED_PREPOSITIONS = set('near outside inside beyond across off around opposite against above below');

/** Nouns that measure an amount of what follows "of" ("40 tons of plastic", "two bags of rice"). */
export const MEASURE_NOUNS = set(`
  ton tons tonne tonnes kilo kilos kilogram kilograms kg gram grams pound pounds ounce ounces litre litres liter liters
  gallon gallons bag bags box boxes cup cups bottle bottles glass glasses piece pieces slice slices pair pairs pack packs
  crate crates barrel barrels dozen dozens hundreds thousands millions billions lot lots bunch
`);

/** Words before a number that make it approximate ("over 300 patients", "around 40 stores"). */
export const APPROXIMATORS = set('over under about around roughly approximately nearly almost');

/** Coordinating conjunctions: split noun phrases and join clauses. */
export const COORDINATORS = set('and or but nor yet plus');

/** Words stripped from the front of a noun phrase: determiners, quantifiers, vague descriptive adjectives. */
export const NOUN_PHRASE_PREFIX_WORDS = set(`
  the a an this that these those my your his her its our their some any each every all both either neither
  no many much more most few several various certain other another such own same
  new old big small good bad great little large long short high low nice best better worst worse
  current previous next last first recent latest main real whole entire particular specific important huge tiny
  major minor entire possible actual additional general overall different similar usual typical
`);

/** Heads that are too vague to be worth an entity on their own. */
export const GENERIC_NOUNS = set(`
  thing things stuff way ways lot lots bit kind sort type part parts piece side end case fact point
  something anything everything nothing someone anyone everyone nobody somebody anybody everybody
  one ones people person man woman guy guys time times day days week weeks month months year years
  moment today tomorrow yesterday tonight now then here there place places area number numbers
  question questions answer problem problems issue issues idea ideas reason example examples
  yes no ok okay hi hello hey thanks thank please sure right well kind lot
  use need help work job stuff matter situation
  does did done has had was were is are be been being
`);

/** Modifiers that turn a bare duration into a date ("last week", "next month"). */
export const RELATIVE_DATE_MODIFIERS = set('last next this previous coming past early late mid every');
/** Date words specific enough to be an entity on their own. */
export const DEICTIC_DATES = set('today tomorrow yesterday tonight');

/** The most frequent English function words: their share of a sentence tells English from other languages. */
export const ENGLISH_FUNCTION_WORDS = set(`
  the a an of and or but to in on at by for with from as into about over after before than
  is are was were be been being am has have had do does did will would can could should may might must
  i you he she it we they me him her us them my your his its our their this that these those
  not no there here what which who when where how why all some any if so
`);

/**
 * States a ticket, order or request is said to be in ("T-1182 was closed", "the order is pending"),
 * each mapped to the status it names: "reopened" is open again. Read as "have status" <state>
 * (core/fact-lexicon.ts, class `status`).
 */
export const STATUS_OF_WORD: ReadonlyMap<string, string> = new Map([
  ['open', 'open'],
  ['opened', 'open'],
  ['reopened', 'open'],
  ['closed', 'closed'],
  ['resolved', 'resolved'],
  ['fixed', 'fixed'],
  ['cancelled', 'cancelled'],
  ['canceled', 'cancelled'],
  ['completed', 'completed'],
  ['finished', 'completed'],
  ['done', 'done'],
  ['archived', 'archived'],
  ['rejected', 'rejected'],
  ['merged', 'merged'],
  ['approved', 'approved'],
  ['blocked', 'blocked'],
  ['pending', 'pending'],
  ['escalated', 'escalated'],
  ['deferred', 'deferred'],
  ['suspended', 'suspended'],
  ['paused', 'paused'],
]);

/**
 * Verbs whose passive with an agent ("was hired by Initech", "was laid off by Acme") also keeps the
 * person's side ("be hired by" Initech): the fact lexicon's employer class is read from the person,
 * and the active form alone ("Initech hire Alice") has the employer as its subject.
 */
export const KEEP_PASSIVE_SIDE_VERBS = set('hire hired employ employed fire fired recruit recruited dismiss dismissed lay laid');

/** The values the corpus draws from: all invented or generic; nothing here refers to real people. */
import { type Rng, int, list, pick } from './random.js';

export const FIRST_NAMES = list(`
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
export const LAST_NAMES = list(`
  Sharma | Kowalczyk | Okafor | Brandt | Moreira | Mensah | Lin | Castillo | Virtanen | Patel | Rahman | Lefebvre | Nwosu |
  Herrera | Yilmaz | Popescu | Whitfield | Karimi | Vos | Tanaka | Akana | Haddad | Ortega | Petrova | Lindgren | Ricci | Aziz |
  Marchetti | Qureshi | Iyer | Dufour | Mwangi | Bauer | Santos | Eriksen | Balogun | Novak | Ferreira | Osei | Aydin | Hoffmann
`);
export const DOCTOR_NAMES = list(`
  Abernathy | Bellweather | Carraway | Delacroix | Edevane | Fairbrother | Gallagher | Halloran | Ingleby | Jessop | Kinsella |
  Lockwood | Merriman | Northcott | Ollerenshaw | Pemberton | Quayle | Rutherford | Sallow | Treadwell | Underhill | Vance |
  Wetherby | Yardley | Ashcombe | Blackwood | Cresswell | Dunmore | Ellery | Fenwick
`);
export const PET_NAMES = list(`
  Biscuit | Pepper | Mochi | Waffles | Juniper | Bramble | Noodle | Clementine | Pickle | Ziggy | Marmalade | Tofu | Crumpet |
  Nutmeg | Pistachio | Basil | Dumpling | Sprout | Kipper | Fudge | Pancake | Figaro | Sushi | Toffee | Olive | Chutney | Gizmo |
  Hazel | Merlin | Pumpkin | Rolo | Sesame | Truffle | Wasabi | Yeti | Bagel | Cinnamon | Dottie | Echo | Frankie | Gnocchi |
  Houdini | Inky | Jellybean | Kiwi | Lentil | Muffin | Nacho | Oreo | Popcorn | Quinoa | Radish | Scout | Tinsel | Udon | Velvet |
  Whiskey | Ziti | Acorn | Bonbon | Cashew | Dijon | Espresso | Falafel | Gingersnap | Hobbes | Icarus | Jolly | Krypto | Loki
`);
export const DOG_BREEDS = list(
  'beagle | border collie | dachshund | greyhound | labrador | corgi | whippet | cocker spaniel | shiba inu | boxer | miniature poodle | Jack Russell | golden retriever | dalmatian | pug | vizsla',
);
export const CAT_BREEDS = list(
  'tabby | Maine Coon | Siamese | ragdoll | Bengal | Persian | British shorthair | black rescue cat | Norwegian forest cat',
);
export const STEMS = list(`
  Velmora | Brightmoor | Quillon | Harbrook | Tessaly | Norrow | Calderon | Pinewick | Ashgrove | Moravel | Kestwick | Lumara |
  Ravelin | Dunmere | Corvane | Halden | Oakhurst | Starling | Elmsworth | Tarragon | Wrenfield | Marlow | Ostara | Belcourt |
  Greyfield | Fairlow | Stonemere | Larkspur | Amberley | Copperline | Silvan | Northgate | Thornbury | Evenlode | Meridian |
  Bellhaven | Cadwell | Drummond | Everton | Foxley | Glenhaven | Highcombe | Ivybridge | Juniperhill | Kingsmere | Loxley
`);
export const COMPANY_SUFFIXES = list(
  'Analytics | Logistics | Robotics | Health | Media | Energy | Systems | Labs | Foods | Insurance | Architects | Biotech',
);
export const SHOP_SUFFIXES = list('Direct | Supply | Home | Outlet | Store | & Co');
export const BANK_SUFFIXES = list('Bank | Building Society | Credit Union | Mutual');
export const CITIES = list(`
  Lisbon | Porto | Seville | Valencia | Bologna | Naples | Vienna | Prague | Krakow | Tallinn | Riga | Vilnius | Copenhagen |
  Bergen | Stockholm | Helsinki | Reykjavik | Dublin | Edinburgh | Bristol | Lyon | Marseille | Bordeaux | Ghent | Antwerp |
  Rotterdam | Hamburg | Munich | Zurich | Geneva | Ljubljana | Zagreb | Split | Athens | Thessaloniki | Istanbul | Marrakech |
  Tunis | Cairo | Nairobi | Cape Town | Tokyo | Osaka | Seoul | Taipei | Hanoi | Bangkok | Singapore | Montreal | Vancouver |
  Mexico City | Lima | Santiago | Buenos Aires | Bogota
`);
export const AIRLINES = list('LH | BA | AF | KL | IB | TP | SK | AY | OS | LX | EI | AZ | LO | OK | TK | DY | FR | U2 | W6 | VY | SN | EW');
export const HOTEL_FORMS = [
  (s: string) => `Hotel ${s}`,
  (s: string) => `the ${s} House`,
  (s: string) => `${s} Suites`,
  (s: string) => `the ${s} Inn`,
];
export const MONTHS = list('January | February | March | April | May | June | July | August | September | October | November | December');
export const WEEKDAYS = list('Monday | Tuesday | Wednesday | Thursday | Friday | Saturday | Sunday');
export const PRODUCTS: { item: string; kind: string }[] = [
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
export const DRUGS: { drug: string; condition: string; plain: string; doses: number[]; unit: string }[] = [
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
export const ROLES = list(`
  data analyst | product designer | backend engineer | account manager | UX researcher | logistics coordinator | project manager |
  sales engineer | people partner | quality inspector | financial controller | content strategist | lab technician | site supervisor
`);
export const PROJECT_NAMES = list(`
  Halcyon | Basalt | Tern | Marigold | Quartz | Sundial | Cobalt | Lantern | Nimbus | Paloma | Saffron | Tundra | Vireo | Wicket |
  Zephyr | Alder | Beacon | Cinder | Dovetail | Ember | Fathom | Glacier | Harrow | Indigo | Kelp | Lynx | Mistral | Nettle | Onyx
`);
export const INSTRUMENTS = list(
  'cello | violin | saxophone | piano | ukulele | drum kit | trumpet | flute | banjo | accordion | harp | clarinet | bass guitar | mandolin',
);
export const WEDDING_PLACES = list(`
  Lake Como | the Cotswolds | Sintra | Dubrovnik | Cornwall | Tuscany | Provence | the Algarve | Bruges | Salzburg | Hallstatt |
  Santorini | the Scottish Highlands | Lake Bled | Mallorca | the Amalfi Coast | Kotor | Cappadocia
`);
export const VENUE_FORMS = list('Manor | Hall | Castle | Farm | Abbey | Gardens | Mill');
export const PARTY_THEMES = list('dinosaur | pirate | space | mermaid | superhero | jungle | football | unicorn | robot | volcano');
export const HOOD_FORMS = [
  (s: string) => `${s} Hill`,
  (s: string) => `${s} Park`,
  (s: string) => `Old ${s}`,
  (s: string) => `${s} Quarter`,
];
export const PROBLEMS = list(`
  broken boiler | leaking kitchen tap | damp patch in the bedroom | faulty intercom | jammed balcony door | blocked shower drain |
  cracked window | dead radiator | broken washing machine | flickering hallway lights
`);
export const CARS = list(`
  Skoda Octavia | Toyota Yaris | Volkswagen Golf | Renault Clio | Honda Jazz | Ford Focus | Kia Ceed | Volvo V60 | Fiat Panda |
  Peugeot 308 | Hyundai Ioniq | Nissan Leaf | Dacia Duster | Subaru Outback | Mini Cooper | Seat Leon | Opel Astra | Citroen Berlingo
`);
export const CAR_PARTS = list(
  'clutch | timing belt | brake pads | exhaust | windscreen | alternator | starter motor | rear suspension | gearbox',
);
export const ALLERGENS = list(
  'peanuts | shellfish | sesame | kiwi | hazelnuts | eggs | mustard | celery | soy | cashews | strawberries | oats',
);
export const LOVED_FOODS = list(
  'pad thai | satay | hummus | pavlova | pesto | baklava | prawn curry | granola | tahini cookies | chocolate spread',
);
export const DISHES = list(`
  lamb tagine | mushroom risotto | duck ramen | fish tacos | aubergine parmigiana | chicken katsu curry | beef pho | spinach pie |
  seafood paella | butter chicken | shakshuka | bibimbap | pad see ew | crab linguine | pork dumplings | goat cheese tart
`);
export const RESTAURANT_ADJ = list('Copper | Blue | Crooked | Golden | Little | Velvet | Wild | Salt | Hidden | Lazy | Green | Silver');
export const RESTAURANT_NOUN = list('Kettle | Fig | Lantern | Anchor | Olive | Pelican | Spoon | Radish | Heron | Barrel | Lemon | Fox');
export const STREET_FORMS = list('Street | Road | Lane | Avenue');
export const SPORTS = list('football | basketball | squash | tennis | volleyball | five-a-side | badminton | netball');
export const BODY_PARTS = list('ankle | knee | wrist | shoulder | hamstring | calf');
export const SAVING_GOALS = list(`
  a deposit on a flat | a trip to Japan | a new laptop | our wedding | a second-hand campervan | an emergency fund |
  a sabbatical | a new bike | driving lessons | a piano
`);
export const PET_SPOTS = list(
  'laundry basket | bathroom sink | bottom drawer of the wardrobe | window box | shoe rack | spare room armchair',
);
export const VET_ISSUES = list('slight heart murmur | ear infection | skin allergy | loose tooth | touch of hip dysplasia | eye infection');

export function ordinal(day: number): string {
  const tens = day % 100;
  if (tens >= 11 && tens <= 13) return `${day}th`;
  return `${day}${['th', 'st', 'nd', 'rd'][day % 10] ?? 'th'}`;
}

/** A calendar date in one of three spoken forms: "14 March", "March 14", "the 14th of March". */
export function dateText(r: Rng): string {
  const month = pick(r, MONTHS);
  const day = int(r, 1, 28);
  return pick(r, [`${day} ${month}`, `${month} ${day}`, `the ${ordinal(day)} of ${month}`]);
}
export const clock = (r: Rng): string => `${int(r, 5, 21)}:${pick(r, ['00', '10', '15', '25', '30', '40', '45', '55'])}`;
export const money = (r: Rng, lo: number, hi: number, step: number): string =>
  `${pick(r, ['£', '€', '$'])}${(int(r, Math.ceil(lo / step), Math.floor(hi / step)) * step).toLocaleString('en-GB')}`;

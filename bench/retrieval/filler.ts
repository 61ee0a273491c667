/** Filler turns: topic chatter, decoys (the same fact types about other people), small talk, assistant replies. */
import type { Topic } from './corpus.js';
import { type Ctx, company, personName } from './facts/model.js';
import {
  AIRLINES,
  BANK_SUFFIXES,
  CARS,
  CITIES,
  DOG_BREEDS,
  DRUGS,
  HOTEL_FORMS,
  INSTRUMENTS,
  PET_NAMES,
  RESTAURANT_ADJ,
  RESTAURANT_NOUN,
  SHOP_SUFFIXES,
  STEMS,
} from './pools.js';
import { type Rng, chance, digits, int, letters, list, pick } from './random.js';

export const CHATTER: Record<Topic, string[]> = {
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

export const SMALL_TALK = list(`
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
export const DECOYS: Record<Topic, ((c: Ctx) => string)[]> = {
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

export const REPLIES: Record<Topic, string[]> = {
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

export const GENERIC_REPLIES = list(`
  Got it. | Thanks for sharing that with me. | That makes sense. Anything else on your mind? | Understood, I'll keep that in mind. |
  Sounds like a busy week! | Ha, I hear you. | No problem at all. | Happy to help whenever you need.
`);

export const INTROS: ((full: string, first: string) => string)[] = [
  (full) => `Hi, I'm ${full}.`,
  (_full, first) => `Hey there, ${first} here.`,
  (full) => `Hello! My name is ${full}.`,
  (full) => `${full} here, nice to meet you.`,
];
export const HOOKS = list(`
  I could use a sounding board today. | Lots going on in my life right now. | I want to keep track of a few things. |
  Long week, I need to talk some stuff through. | I've got a few updates and some questions.
`);
export const INTRO_REPLIES: ((first: string) => string)[] = [
  (first) => `Nice to meet you, ${first}! What's on your mind?`,
  (first) => `Hi ${first}, happy to help. Go ahead.`,
  (first) => `Hello ${first}! I'm all ears.`,
];
/** Occasionally the user names themselves again mid-conversation (only then does a fact turn carry the name). */
export const SELF_MENTIONS: ((first: string) => string)[] = [
  (first) => `Okay, ${first} with an update. `,
  (first) => `It's ${first} again. `,
  (first) => `${first} here, quick one. `,
];

/** An assistant reply on the turn's topic (sometimes generic), not repeating one already given in this conversation. */
export function reply(r: Rng, topic: Topic | null, first: string, given: Set<string>): string {
  let text = '';
  for (let attempt = 0; attempt < 20; attempt++) {
    text = topic && chance(r, 0.8) ? pick(r, REPLIES[topic]) : pick(r, GENERIC_REPLIES);
    if (!given.has(text)) break;
  }
  given.add(text);
  if (chance(r, 0.2)) text = `${first}, ${text.charAt(0).toLowerCase()}${text.slice(1)}`;
  return text;
}

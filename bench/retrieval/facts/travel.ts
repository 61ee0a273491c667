/** Fact types of the travel topic. */
import { type QuestionDraft, factType } from './model.js';
import { AIRLINES, CITIES, HOTEL_FORMS, STEMS, clock, dateText } from '../pools.js';
import { capitalize, chance, digits, int, letters, pick } from '../random.js';

export const flightFact = factType('flight', 'travel', 3, ({ r, u, first }) => {
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
  return { turns, questions };
});

export const hotelFact = factType('hotel', 'travel', 1.5, ({ r, u, first }) => {
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
  return { turns, questions };
});

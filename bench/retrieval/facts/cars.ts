/** Fact types of the cars topic. */
import { type QuestionDraft, factType } from './model.js';
import { CARS, CAR_PARTS, STEMS, money } from '../pools.js';
import { digits, int, letters, pick } from '../random.js';

export const carFact = factType('car', 'cars', 1, ({ r, u, first }) => {
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
  return { turns, questions };
});

export const garageFact = factType('garage', 'cars', 1, ({ r, u, first }) => {
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
  return { turns, questions };
});

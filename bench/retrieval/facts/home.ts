/** Fact types of the home topic. */
import { type QuestionDraft, factType, personName } from './model.js';
import { HOOD_FORMS, PROBLEMS, STEMS, dateText, money } from '../pools.js';
import { chance, digits, pick } from '../random.js';

export const leaseFact = factType('lease', 'home', 1, (c) => {
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
  return { turns, questions };
});

export const repairFact = factType('repair', 'home', 1.5, ({ r, u, first }) => {
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
  return { turns, questions };
});

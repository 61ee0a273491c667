/** Fact types of the health topic. */
import { type QuestionDraft, factType, personName } from './model.js';
import { BODY_PARTS, DOCTOR_NAMES, DRUGS, SPORTS, clock, dateText } from '../pools.js';
import { capitalize, chance, int, pick } from '../random.js';

export const medicationFact = factType('medication', 'health', 2, ({ r, u, first }) => {
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
      turns.push(pick(r, [`The clinic moved my check-up to ${later}.`, `Surgery called, they've rescheduled me for ${later} instead.`]));
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
  return { turns, questions };
});

export const injuryFact = factType('injury', 'health', 1, (c) => {
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
  return { turns, questions };
});

/** Fact types of the hobbies topic. */
import { type QuestionDraft, factType, personName } from './model.js';
import { CITIES, INSTRUMENTS, WEEKDAYS } from '../pools.js';
import { chance, int, pick } from '../random.js';

export const instrumentFact = factType('instrument', 'hobbies', 1, (c) => {
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
      texts: [`Which weekday are ${first}'s music lessons on now?`, `After the schedule change, on what day does ${first} have lessons?`],
    });
  } else {
    questions.push({
      kind: 'temporal',
      answer: day,
      evidence: [0],
      texts: [`On which day of the week does ${first} have music lessons?`],
    });
  }
  return { turns, questions };
});

export const raceFact = factType('race', 'hobbies', 1, ({ r, first }) => {
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
  return { turns, questions };
});

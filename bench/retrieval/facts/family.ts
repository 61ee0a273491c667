/** Fact types of the family topic. */
import { type QuestionDraft, factType, personName } from './model.js';
import { PARTY_THEMES, STEMS, VENUE_FORMS, WEDDING_PLACES, dateText } from '../pools.js';
import { chance, int, pick } from '../random.js';

export const weddingFact = factType('wedding', 'family', 1, (c) => {
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
  return { turns, questions };
});

export const birthdayFact = factType('birthday', 'family', 1, (c) => {
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
  return { turns, questions };
});

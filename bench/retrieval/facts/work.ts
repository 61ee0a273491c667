/** Fact types of the work topic. */
import { type QuestionDraft, factType, company, personName } from './model.js';
import { CITIES, PROJECT_NAMES, ROLES, dateText } from '../pools.js';
import { article, chance, pick } from '../random.js';

export const jobFact = factType('job', 'work', 2, (c) => {
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
  return { turns, questions };
});

export const projectFact = factType('project', 'work', 1, (c) => {
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
  return { turns, questions };
});

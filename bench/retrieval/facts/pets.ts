/** Fact types of the pets topic. */
import { type QuestionDraft, factType } from './model.js';
import { CAT_BREEDS, DOG_BREEDS, PET_NAMES, PET_SPOTS, VET_ISSUES } from '../pools.js';
import { capitalize, chance, pick } from '../random.js';

export const petFact = factType('pet', 'pets', 3, ({ r, u, first }) => {
  const dog = chance(r, 0.65);
  const species = dog ? 'dog' : 'cat';
  const young = dog ? 'puppy' : 'kitten';
  const breed = pick(r, dog ? DOG_BREEDS : CAT_BREEDS);
  const pet = u.from(r, PET_NAMES);
  const [he, him] = chance(r, 0.5) ? ['he', 'him'] : ['she', 'her'];
  const turns = [
    pick(r, [
      `We finally adopted a ${breed} ${young}, and after a week of arguing we named ${him} ${pet}.`,
      `Big news at home: a little ${breed} ${young} called ${pet} moved in with us on Saturday.`,
      `We went to the shelter "just to look" and came home with a ${breed}. ${pet} is asleep on my feet as I type this.`,
      `My partner finally gave in and we got a ${breed} ${young}. The kids chose the name ${pet}, which I secretly love.`,
      `Meet ${pet}: ${he}'s our new ${breed}, ten weeks old, and ${he} has already chewed through one of my slippers.`,
      `The breeder called and the ${breed} ${young} is ours! ${capitalize(he)} comes home next week and we're calling ${him} ${pet}.`,
    ]),
  ];
  const questions: QuestionDraft[] = [
    {
      kind: 'paraphrase',
      answer: pet,
      evidence: [0],
      texts: [
        `What is the name of ${first}'s ${species}?`,
        `What did ${first} call the new ${species}?`,
        `${first} got a ${species} recently. What is it called?`,
        `Which name did ${first}'s household give their ${species}?`,
      ],
    },
    {
      kind: 'entity',
      answer: breed,
      evidence: [0],
      texts: [`What breed is ${pet}?`, `What kind of ${species} is ${pet}?`, `${pet} is which breed of ${species}?`],
    },
  ];
  if (chance(r, 0.7)) {
    if (chance(r, 0.5)) {
      const issue = pick(r, VET_ISSUES);
      turns.push(
        pick(r, [
          `The vet found a ${issue} at the first check-up, so ${he} is on special food for now.`,
          `First vet visit done. Turns out it's a ${issue}, nothing dramatic, but we go back in a month.`,
        ]),
      );
      questions.push({
        kind: 'entity',
        answer: issue,
        evidence: [0, 1],
        texts: [
          `What did the vet find when ${pet} was examined?`,
          `What health issue does ${pet} have?`,
          `Is anything wrong with ${pet}'s health?`,
        ],
      });
    } else {
      const spot = pick(r, PET_SPOTS);
      turns.push(
        pick(r, [
          `We bought a fancy bed and ${he} ignores it completely; ${he} sleeps in the ${spot} every night.`,
          `Every night ${he} ends up curled in the ${spot}. I've given up fighting it.`,
        ]),
      );
      questions.push({
        kind: 'entity',
        answer: spot,
        evidence: [0, 1],
        texts: [`Where does ${pet} like to sleep?`, `Where does ${pet} spend the night?`],
      });
    }
  }
  return { turns, questions };
});

/** Fact types of the food topic. */
import { type QuestionDraft, factType } from './model.js';
import { ALLERGENS, DISHES, LOVED_FOODS, RESTAURANT_ADJ, RESTAURANT_NOUN, STEMS, STREET_FORMS } from '../pools.js';
import { capitalize, chance, pick } from '../random.js';

export const allergyFact = factType('allergy', 'food', 1, ({ r, first }) => {
  const allergen = pick(r, ALLERGENS);
  const loved = pick(r, LOVED_FOODS);
  const turns = [
    pick(r, [
      `Found out I'm allergic to ${allergen}, which is tragic because I love ${loved}.`,
      `The allergy test came back positive for ${allergen}. Goodbye, ${loved}.`,
      `Turns out my body really can't handle ${allergen}. The doctor says to cut it out completely.`,
    ]),
  ];
  const questions: QuestionDraft[] = [
    {
      kind: 'paraphrase',
      answer: allergen,
      evidence: [0],
      texts: [`What can't ${first} eat?`, `Which food does ${first} have to avoid?`, `What ingredient makes ${first} ill?`],
    },
  ];
  return { turns, questions };
});

export const restaurantFact = factType('restaurant', 'food', 1, ({ r, u, first }) => {
  const restaurant = u.make(() => `the ${pick(r, RESTAURANT_ADJ)} ${pick(r, RESTAURANT_NOUN)}`);
  const street = u.make(() => `${pick(r, STEMS)} ${pick(r, STREET_FORMS)}`);
  const dish = pick(r, DISHES);
  const Restaurant = capitalize(restaurant);
  // The dish comes either with the name or in a later turn that does not repeat it.
  const dishLater = chance(r, 0.5);
  const turns = [
    dishLater
      ? pick(r, [
          `Our go-to place is ${restaurant} on ${street}. Tiny, loud, always full.`,
          `If you're ever near ${street}, try ${restaurant}. We've been going there for years.`,
        ])
      : pick(r, [
          `Our go-to place is ${restaurant} on ${street}; I always get the ${dish}.`,
          `If you're ever near ${street}, try ${restaurant}. Their ${dish} is the best thing I've eaten this year.`,
          `Date night at ${restaurant} on ${street} again. Same table, same ${dish}, zero regrets.`,
        ]),
  ];
  if (dishLater) {
    turns.push(
      pick(r, [
        `Went back to our usual place last night. I never even look at the menu, it's the ${dish} every time.`,
        `Dinner at the usual spot again. The ${dish} there is honestly unbeatable.`,
      ]),
    );
  }
  const questions: QuestionDraft[] = [
    {
      kind: 'entity',
      answer: dish,
      evidence: dishLater ? [0, 1] : [0],
      texts: [`What does ${first} usually order at ${restaurant}?`, `Which dish does ${first} recommend at ${restaurant}?`],
    },
    { kind: 'entity', answer: street, evidence: [0], texts: [`Where is ${Restaurant}?`, `On which street is ${restaurant}?`] },
    {
      kind: 'paraphrase',
      answer: restaurant,
      evidence: [0],
      texts: [`Which restaurant does ${first} keep going back to?`, `What is ${first}'s favourite place to eat out?`],
    },
  ];
  return { turns, questions };
});

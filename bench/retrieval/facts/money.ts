/** Fact types of the money topic. */
import { type QuestionDraft, factType } from './model.js';
import { BANK_SUFFIXES, PRODUCTS, SAVING_GOALS, SHOP_SUFFIXES, STEMS, dateText, money } from '../pools.js';
import { article, chance, digits, letters, pick } from '../random.js';

export const orderFact = factType('order', 'money', 3, ({ r, u, first }) => {
  const { item, kind } = pick(r, PRODUCTS);
  const shop = u.make(() => `${pick(r, STEMS)} ${pick(r, SHOP_SUFFIXES)}`);
  const code = u.make(() => `${letters(r, 2)}-${digits(r, 4)}`);
  const pending = chance(r, 0.6);
  const turns = [
    pending
      ? pick(r, [
          `I ordered ${article(item)} from ${shop} last week, order ${code}, and it still hasn't shipped.`,
          `Can you help me word a complaint? ${shop} still hasn't sent the ${item}. The order number is ${code}.`,
          `Writing this down so I don't lose it: ${code} is the ${shop} order for the ${item}.`,
        ])
      : pick(r, [
          `My new ${item} finally turned up. Order ${code} from ${shop} took almost three weeks, which is ridiculous.`,
          `I splurged and bought ${article(item)} from ${shop} (order ${code}). No regrets so far.`,
          `${shop} sent the ${item} in the wrong colour, so I'm returning order ${code}. Annoying.`,
        ]),
  ];
  const questions: QuestionDraft[] = [
    {
      kind: 'exact',
      answer: item,
      evidence: [0],
      texts: [
        `What was ordered under order number ${code}?`,
        `Which item is order ${code} for?`,
        `${code}: what did ${first} buy with that order?`,
        `What product does order ${code} refer to?`,
      ],
    },
    {
      kind: 'exact',
      answer: shop,
      evidence: [0],
      texts: [`Which shop is order ${code} from?`, `Where did ${first} place order ${code}?`, `Which retailer handles order ${code}?`],
    },
    {
      kind: 'paraphrase',
      answer: item,
      evidence: [0],
      texts: [
        `Which ${kind} did ${first} buy online?`,
        `What ${kind} did ${first} purchase recently?`,
        `${first} mentioned a new ${kind}. What was it?`,
      ],
    },
  ];
  if (pending && chance(r, 0.4)) {
    const date = dateText(r);
    turns.push(
      pick(r, [
        `The tracking page now says the parcel arrives on ${date}, fingers crossed.`,
        `Customer service finally replied: delivery is expected on ${date}.`,
      ]),
    );
    questions.push({
      kind: 'temporal',
      answer: date,
      evidence: [0, 1],
      texts: [`When is ${first}'s ${kind} supposed to be delivered?`, `On what date should the ${kind} ${first} bought arrive?`],
    });
  }
  return { turns, questions };
});

export const savingsFact = factType('savings', 'money', 1, ({ r, first }) => {
  const amount = money(r, 50, 900, 25);
  const goal = pick(r, SAVING_GOALS);
  const turns = [
    pick(r, [
      `I've set up a standing order of ${amount} a month into a savings pot for ${goal}.`,
      `New rule: ${amount} goes straight into savings every payday. The goal is ${goal}.`,
      `If I keep putting away ${amount} each month, ${goal} should be doable in about two years.`,
    ]),
  ];
  const questions: QuestionDraft[] = [
    {
      kind: 'paraphrase',
      answer: amount,
      evidence: [0],
      texts: [`How much does ${first} save every month?`, `What amount does ${first} set aside monthly?`],
    },
    {
      kind: 'paraphrase',
      answer: goal,
      evidence: [0],
      texts: [`What is ${first} saving up for?`, `What's the goal of ${first}'s savings plan?`],
    },
  ];
  if (chance(r, 0.4)) {
    let more = money(r, 50, 900, 25);
    while (more === amount) more = money(r, 50, 900, 25);
    turns.push(
      pick(r, [
        `Got a small pay rise, so the monthly savings transfer is now ${more}.`,
        `I had to adjust the budget: from now on it's ${more} a month into the pot.`,
      ]),
    );
    questions.push({
      kind: 'update',
      answer: more,
      evidence: [1],
      texts: [`How much does ${first} save per month after changing the plan?`, `What is ${first}'s monthly savings amount now?`],
    });
  }
  return { turns, questions };
});

export const mortgageFact = factType('mortgage', 'money', 1, ({ r, u, first }) => {
  const bank = u.make(() => `${pick(r, STEMS)} ${pick(r, BANK_SUFFIXES)}`);
  const rate = (3 + r() * 2.4).toFixed(2);
  const years = String(pick(r, [2, 3, 5, 10]));
  const turns = [
    pick(r, [
      `The mortgage got approved with ${bank}: ${rate}% fixed for ${years} years. I may cry.`,
      `We went with ${bank} in the end, ${rate} percent, fixed for ${years} years. Signing on Thursday.`,
    ]),
  ];
  const questions: QuestionDraft[] = [
    {
      kind: 'entity',
      answer: rate,
      evidence: [0],
      texts: [`What interest rate did ${bank} give ${first}?`, `At what rate is ${first}'s home loan with ${bank}?`],
    },
    {
      kind: 'paraphrase',
      answer: bank,
      evidence: [0],
      texts: [`Which lender is ${first}'s home loan with?`, `Who is financing ${first}'s house purchase?`],
    },
  ];
  return { turns, questions };
});

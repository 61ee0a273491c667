import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Candidate, FusedCandidate } from './fusion.js';
import { onNamedDay, periodMatch, queryPeriod, turnDates } from './turn-dates.js';
import {
  asksFurther,
  DEFAULT_TURN_WEIGHTS,
  expandTurnCandidates,
  followUpChunks,
  liftThreads,
  rerankTurns,
  turnLenders,
  type TurnSource,
} from './turn-ranking.js';
import { LexicalIndex } from './lexical-index.js';
import { querySpeakers, turnSpeaker, withoutSpeaker } from './turn-speakers.js';
import { ANSWER_NAME, ANSWER_QUANTITY, ANSWER_TIME, mentionsName, queryAnswerKind, turnAnswerKinds } from './turn-answers.js';

const day = (iso: string) => new Date(`${iso}T12:00:00Z`);

describe('turn dates', () => {
  it('reads the period a query names', () => {
    assert.deepEqual(queryPeriod('What did John do on 31 October, 2022?'), { day: 31, month: 9, year: 2022 });
    assert.deepEqual(queryPeriod('Who did Maria have dinner with on May 3, 2023?'), { day: 3, month: 4, year: 2023 });
    assert.deepEqual(queryPeriod('When did Melanie go camping in June?'), { month: 5 });
    assert.deepEqual(queryPeriod('Which hobby did Sam take up in May 2023?'), { month: 4, year: 2023 });
    assert.deepEqual(queryPeriod('What year did John start surfing in 2019?'), { year: 2019 });
    assert.equal(queryPeriod('May I ask what Caroline researched?'), null);
    assert.equal(queryPeriod('Where does Alice work?'), null);
  });

  it('resolves relative dates in a turn against its time', () => {
    const dates = turnDates('I went to a support group yesterday, and two weeks ago I moved. Last Friday was fun.', day('2023-05-08'));
    assert.deepEqual(
      dates.map((date) => date.toISOString().slice(0, 10)),
      ['2023-05-08', '2023-05-07', '2023-04-24', '2023-05-05'],
    );
    assert.equal(periodMatch({ day: 7, month: 4, year: 2023 }, dates), 1);
    assert.equal(periodMatch({ month: 3 }, dates), 1, 'April, through "two weeks ago"');
    assert.equal(periodMatch({ day: 20, month: 4, year: 2023 }, [day('2023-05-15')]), 0.5);
    assert.equal(periodMatch({ year: 2022 }, dates), 0);
  });

  it('tells the very day a query names from the days around it', () => {
    const cases: [string, Parameters<typeof onNamedDay>[0], Date[], boolean][] = [
      ['its own time on the day', { day: 3, month: 5, year: 2023 }, [day('2023-06-03')], true],
      [
        'a relative date on the day ("yesterday")',
        { day: 3, month: 5, year: 2023 },
        turnDates('Yesterday was wild.', day('2023-06-04')),
        true,
      ],
      ['the day before, which periodMatch counts in full', { day: 3, month: 5, year: 2023 }, [day('2023-06-02')], false],
      ['the day after', { day: 3, month: 5, year: 2023 }, [new Date('2023-06-04T00:30:00Z')], false],
      ['the same day of another year', { day: 3, month: 5, year: 2023 }, [day('2022-06-03')], false],
      ['a day named without a year, in any year', { day: 3, month: 5 }, [day('2021-06-03')], true],
      ['a month is no day', { month: 5, year: 2023 }, [day('2023-06-03')], false],
      ['a year is no day', { year: 2023 }, [day('2023-06-03')], false],
    ];
    for (const [name, period, dates, expected] of cases) assert.equal(onNamedDay(period, dates), expected, name);
    assert.equal(periodMatch({ day: 3, month: 5, year: 2023 }, [day('2023-06-02')]), 1, 'the day before is in the period');
  });
});

describe('turn ranking', () => {
  const texts: Record<string, string> = {
    'm:0': 'Sam: Tell me more about your road trip. Was it relaxing?',
    'm:1': 'Evan: Fresh air and a cozy cabin made it a real retreat.',
    'm:2': 'Sam: Nice!',
  };
  const source = (cosines: Record<string, number>, dates: Record<string, Date[]> = {}): TurnSource => ({
    cosineOf: (ids) => new Map([...ids].filter((id) => id in cosines).map((id) => [id, cosines[id]!])),
    isQuestion: (id) => texts[id]?.endsWith('?') ?? false,
    datesOf: (id) => dates[id] ?? [],
    speakerOf: (id) => turnSpeaker(texts[id] ?? ''),
    answersOf: (id) => turnAnswerKinds(withoutSpeaker(texts[id] ?? '')),
    chunks: () => Object.keys(texts).map((id) => [id, 'm'] as [string, string]),
  });
  const fused = (scores: Record<string, number>): FusedCandidate[] =>
    Object.entries(scores).map(([chunkId, score]) => ({ chunkId, memoryId: chunkId.split(':')[0]!, score, breakdown: {} }));

  it('brings in the neighbours of candidates with their cosine, and the turns of the named period', () => {
    const candidates = new Map<string, Candidate>([['m:0', { chunkId: 'm:0', memoryId: 'm', bm25: 3 }]]);
    const dated = expandTurnCandidates(
      candidates,
      'What did Evan do on 6 May 2023?',
      source({ 'm:0': 0.8, 'm:1': 0.7 }, { 'm:2': [day('2023-05-06')] }),
    );
    assert.deepEqual([...candidates.keys()].sort(), ['m:0', 'm:1', 'm:2']);
    assert.equal(candidates.get('m:1')!.cosine, 0.7);
    assert.equal(candidates.get('m:0')!.cosine, 0.8, 'a candidate the vector pool missed gets its cosine');
    assert.deepEqual([...dated], [['m:2', DEFAULT_TURN_WEIGHTS.dateMatch + DEFAULT_TURN_WEIGHTS.dayMatch]], 'on the very day named');
  });

  it('puts the turns of the very day a query names above those of the day before', () => {
    // Two sessions: one the day before the named day, whose turn matches the words better, and
    // the named day's, whose turn holds the answer ("as mentioned on 3 June").
    const candidates = new Map<string, Candidate>([
      ['before:0', { chunkId: 'before:0', memoryId: 'before', bm25: 3 }],
      ['on:0', { chunkId: 'on:0', memoryId: 'on', bm25: 1 }],
    ]);
    const dates = { 'before:0': [day('2023-06-02')], 'on:0': [day('2023-06-03')] };
    const sessions: TurnSource = {
      ...source({}, dates),
      chunks: () => [
        ['before:0', 'before'],
        ['on:0', 'on'],
      ],
    };
    const dated = expandTurnCandidates(candidates, 'What new activity did Maria start, as mentioned on 3 June, 2023?', sessions);
    assert.equal(dated.get('before:0'), DEFAULT_TURN_WEIGHTS.dateMatch, 'the day before is in the period');
    const ranked = rerankTurns(fused({ 'before:0': 1, 'on:0': 0.7 }), dated, sessions);
    assert.deepEqual(
      ranked.map((entry) => entry.chunkId),
      ['on:0', 'before:0'],
    );
  });

  it('lifts the reply to a matching question above the question itself', () => {
    const ranked = rerankTurns(fused({ 'm:0': 1, 'm:1': 0.6, 'm:2': 0.1 }), new Map(), source({}));
    assert.deepEqual(
      ranked.map((entry) => entry.chunkId),
      ['m:1', 'm:0', 'm:2'],
    );
    // Every turn of the session also gains half the session's best score (0.92).
    assert.equal(ranked[0]!.score, 1.38, '0.6 + 0.8 × (1 − 0.6), + 0.5 × 0.92');
    assert.equal(ranked[1]!.score, 1.36, 'the question: 1 − 0.1, + 0.5 × 0.92');
  });

  it('lifts the turns of the session that matches best', () => {
    // Two sessions, one turn each matching about as well; the first session has a second good match.
    const scores = { 'a:0': 0.5, 'a:5': 0.9, 'b:0': 0.55 };
    const ranked = rerankTurns(fused(scores), new Map(), source({}));
    assert.deepEqual(
      ranked.map((entry) => entry.chunkId),
      ['a:5', 'a:0', 'b:0'],
    );
    assert.equal(ranked[1]!.score, 0.95, '0.5 + 0.5 × 0.9');
    assert.equal(ranked[2]!.score, 0.825, '0.55 + 0.5 × 0.55');
    const without = rerankTurns(fused(scores), new Map(), source({}), { weights: { ...DEFAULT_TURN_WEIGHTS, episode: 0 } });
    assert.deepEqual(
      without.map((entry) => entry.chunkId),
      ['a:5', 'b:0', 'a:0'],
    );
  });

  it('lifts the turns that can give the kind of answer the query asks for', () => {
    texts['t:0'] = 'Evan: The cabin was lovely and quiet.';
    texts['t:1'] = 'Evan: We drove up to the cabin last Friday.';
    texts['t:2'] = 'Evan: We stayed at the cabin for three nights.';
    try {
      const scores = { 't:0': 0.9, 't:1': 0.8, 't:2': 0.8 };
      const order = (query: string) =>
        rerankTurns(fused(scores), new Map(), source({}), { answerKind: queryAnswerKind(query) }).map((entry) => entry.chunkId);
      assert.deepEqual(order('When did Evan go to the cabin?'), ['t:1', 't:0', 't:2']);
      assert.deepEqual(order('How many nights did Evan stay at the cabin?'), ['t:2', 't:0', 't:1']);
      assert.deepEqual(order('What was the cabin like?'), ['t:0', 't:1', 't:2'], 'no kind asked: no rule');
    } finally {
      for (const id of ['t:0', 't:1', 't:2']) delete texts[id];
    }
  });

  it('lifts the turns that name someone or something when the query asks who, where or which', () => {
    texts['n:0'] = 'Melanie: We celebrated my daughter’s birthday with a concert last night!';
    texts['n:1'] = 'Melanie: Thanks, Caroline! It was Matt Patterson, he is so talented.';
    try {
      const scores = { 'n:0': 0.9, 'n:1': 0.7 };
      const order = (query: string) =>
        rerankTurns(fused(scores), new Map(), source({}), { answerKind: queryAnswerKind(query) }).map((entry) => entry.chunkId);
      assert.deepEqual(order('Who performed at the concert at Melanie’s daughter’s birthday?'), ['n:1', 'n:0']);
      assert.deepEqual(order('How did the concert at the birthday go?'), ['n:0', 'n:1'], 'no name asked: no rule');
    } finally {
      for (const id of ['n:0', 'n:1']) delete texts[id];
    }
  });

  it('ranks the turns of a speaker the query does not name lower, and only when it names some of them', () => {
    const scores = { 'm:0': 0.5, 'm:1': 0.45, 'm:2': 0.6 };
    const about = (query: string) =>
      rerankTurns(fused(scores), new Map(), source({}), { speakers: querySpeakers(query, ['sam', 'evan']) }).map((entry) => entry.chunkId);
    // Without the rule Sam's "Nice!" leads; a question about Evan puts Evan's turn first.
    assert.deepEqual(about('What did Evan like about the cabin?'), ['m:1', 'm:2', 'm:0']);
    assert.deepEqual(about('What did Sam and Evan talk about?'), ['m:2', 'm:1', 'm:0'], 'both named: no rule');
    assert.deepEqual(about('What was the cabin like?'), ['m:2', 'm:1', 'm:0'], 'none named: no rule');
  });
});

describe('threads', () => {
  const thread: Record<string, string> = {
    't:0': 'Melanie: That pic was from a show I went to. It was so much fun!',
    't:1': "Caroline: Wow, what a fun moment! What's the band?",
    't:2': 'Melanie: "Summer Sounds", they played an awesome pop song.',
    't:3': 'Caroline: Did they play an encore?',
    't:4': 'Melanie: They did, twice!',
    't:5': 'Caroline: I love live music.',
    't:6': 'Melanie: Me too.',
    'u:0': 'Melanie: We went camping last week.',
    'u:1': 'Caroline: Really?',
    'u:2': 'Caroline: Where did you go?',
  };
  const source = {
    isQuestion: (id: string) => thread[id]?.endsWith('?') ?? false,
    speakerOf: (id: string) => turnSpeaker(thread[id] ?? ''),
  };
  const scored = (scores: Record<string, number>): FusedCandidate[] =>
    Object.entries(scores).map(([chunkId, score]) => ({ chunkId, memoryId: chunkId.split(':')[0]!, score, breakdown: {} }));
  const lifted = (scores: Record<string, number>, weight = 0.3) => {
    const entries = scored(scores);
    liftThreads(entries, source, weight);
    return Object.fromEntries(entries.map((entry) => [entry.chunkId, Math.round(entry.score * 1000) / 1000]));
  };

  it("lifts a turn by its speaker's turn across the other speaker's question, both ways", () => {
    assert.deepEqual(lifted({ 't:0': 2, 't:1': 0.5, 't:2': 1 }), { 't:0': 2, 't:1': 0.5, 't:2': 1.3 }, 'the answer after the question');
    assert.deepEqual(lifted({ 't:0': 1, 't:1': 0.5, 't:2': 2 }), { 't:0': 1.3, 't:1': 0.5, 't:2': 2 }, 'the topic before it');
  });

  it('lends nothing without a question between, across speakers, between equals, or from outside the candidates', () => {
    const cases: [string, Record<string, number>, number?][] = [
      ['no question between (t:5)', { 't:4': 2, 't:5': 0.5, 't:6': 1 }],
      ['the turn two away is another speaker', { 'u:0': 2, 'u:1': 0.5, 'u:2': 1 }],
      ['neither scores above the other', { 't:0': 1, 't:1': 0.5, 't:2': 1 }],
      ['weight 0', { 't:0': 2, 't:1': 0.5, 't:2': 1 }, 0],
      ['the turn two away is no candidate', { 't:1': 0.5, 't:2': 1 }],
      ['the question between is no candidate', { 't:0': 2, 't:2': 1 }],
    ];
    for (const [name, scores, weight] of cases) assert.deepEqual(lifted(scores, weight), scores, name);
  });

  it('lends the scores from before any turn gained, and never reorders the pair it lifts', () => {
    // t:2 gains from t:4 (to 3); t:0 gains from what t:2 had (2), not from 3.
    const after = lifted({ 't:0': 1, 't:1': 0.1, 't:2': 2, 't:3': 0.1, 't:4': 4 }, 0.5);
    assert.equal(after['t:2'], 3);
    assert.equal(after['t:0'], 1.5);
    assert.ok(after['t:0']! < after['t:2']! && after['t:2']! < after['t:4']!);
  });

  it('is the last rule of the turn ranking', () => {
    const ranked = rerankTurns(scored({ 't:0': 1, 't:1': 0.2, 't:2': 0.5 }), new Map(), {
      ...source,
      answersOf: () => 0,
    });
    const without = rerankTurns(
      scored({ 't:0': 1, 't:1': 0.2, 't:2': 0.5 }),
      new Map(),
      { ...source, answersOf: () => 0 },
      { weights: { ...DEFAULT_TURN_WEIGHTS, thread: 0 } },
    );
    const score = (list: FusedCandidate[], id: string) => list.find((entry) => entry.chunkId === id)!.score;
    const gap = score(without, 't:0') - score(without, 't:2');
    assert.ok(Math.abs(score(ranked, 't:2') - score(without, 't:2') - DEFAULT_TURN_WEIGHTS.thread * gap) < 1e-3);
    assert.equal(score(ranked, 't:0'), score(without, 't:0'));
  });
});

describe('answer kinds', () => {
  it('reads the kind of answer a query asks for', () => {
    const cases: [string, number][] = [
      ['When did Melanie paint a sunrise?', ANSWER_TIME],
      ['In what year did John start surfing?', ANSWER_TIME],
      ['What year did John start surfing?', ANSWER_TIME],
      ['Around when was the party?', ANSWER_TIME],
      ['How long ago was the trip?', ANSWER_TIME],
      ['How long has Caroline had her friends?', ANSWER_QUANTITY],
      ['How many children does Melanie have?', ANSWER_QUANTITY],
      ['How often does John surf?', ANSWER_QUANTITY],
      ['Who performed at the concert?', ANSWER_NAME],
      ['Where did Oliver hide his bone once?', ANSWER_NAME],
      ['Which city did John visit?', ANSWER_NAME],
      ['What are the names of Melanie’s pets?', ANSWER_NAME],
      ['What book did Caroline recommend?', ANSWER_NAME],
      ['Where was Caroline when she moved?', ANSWER_NAME],
      ['How did Melanie feel after the accident?', 0],
      ['What is Caroline’s identity?', 0],
      ['What kind of pot did Mel make?', 0],
    ];
    for (const [query, kind] of cases) assert.equal(queryAnswerKind(query), kind, query);
  });

  it('reads the kinds of answer a turn can give', () => {
    const cases: [string, number][] = [
      ['I went to a support group yesterday.', ANSWER_TIME],
      ['We moved here in 2019.', ANSWER_TIME | ANSWER_QUANTITY],
      ['See you on Friday!', ANSWER_TIME],
      ['The show is in October.', ANSWER_TIME],
      ['It was on 3 May.', ANSWER_TIME | ANSWER_QUANTITY],
      ['You may like it.', 0],
      ['I have known them for four years.', ANSWER_QUANTITY],
      ['I run twice a week.', ANSWER_QUANTITY],
      ['Two weeks ago we went camping.', ANSWER_TIME | ANSWER_QUANTITY],
      ['That sounds lovely!', 0],
      ['It was Matt Patterson, he is so talented.', ANSWER_NAME],
    ];
    for (const [text, kinds] of cases) assert.equal(turnAnswerKinds(text), kinds, text);
  });

  it('tells a name inside a sentence from a greeting, a vocative, a sentence start, a day and a month', () => {
    const cases: [string, boolean][] = [
      ['It was Matt Patterson, he is so talented.', true],
      ['We hiked in Yosemite last year.', true],
      ['I loved "Becoming Nicole" by Amy Ellis Nutt.', true],
      ['And yup, I do- Oscar, my guinea pig.', true],
      ['I heard stories from a veteran named Samuel.', true],
      ['Thanks, Caroline!', false],
      ['Hey Mel! How are you?', false],
      ['Wow, Caroline, that looks great.', false],
      ['I’m always here for you, Mel!', false],
      ['Painting is fun. Nature is amazing.', false],
      ['See you next Saturday!', false],
      ['We met in October, I think.', false],
      ['Yeah, I think so. I’m glad.', false],
    ];
    for (const [text, named] of cases) assert.equal(mentionsName(text), named, text);
  });
});

describe('follow-ups', () => {
  // The topic is named in f:0; the other speaker's question f:1 asks what the query asks; f:2 answers.
  const turns: Record<string, string> = {
    'f:0': 'Priya: I finally finished reading "The Salt Road" last night, what a book.',
    'f:1': 'Omar: Nice! What did you learn from it?',
    'f:2': 'Priya: Mostly that patience pays off, and that home is the people around you.',
    'f:3': 'Omar: Sounds like a good one. Did you enjoy the ending?',
    'f:4': 'Priya: I did, I cried a bit.',
    'g:0': 'Omar: My sister moved to Lisbon in the spring.',
    'g:1': 'Priya: How is she finding it there?',
    'g:2': 'Omar: She loves the food and the light.',
  };
  const lexical = new LexicalIndex();
  const partition = lexical.createPartition('c');
  for (const [chunkId, text] of Object.entries(turns)) partition.upsert(chunkId, chunkId.split(':')[0]!, text);
  const source = {
    isQuestion: (id: string) => turns[id]?.endsWith('?') ?? false,
    speakerOf: (id: string) => turnSpeaker(turns[id] ?? ''),
    answersOf: () => 0,
  };
  const scored = (scores: Record<string, number>): FusedCandidate[] =>
    Object.entries(scores).map(([chunkId, score]) => ({ chunkId, memoryId: chunkId.split(':')[0]!, score, breakdown: {} }));
  const ranked = (query: string, scores: Record<string, number>, withTerms = true) => {
    const queryTerms = lexical.queryTermMatches(query, ['c'], followUpChunks(Object.keys(scores), source.isQuestion));
    return rerankTurns(scored(scores), new Map(), source, withTerms ? { queryTerms } : {}).map((entry) => entry.chunkId);
  };
  // As the fused scores come: the turn naming the book matches best, the answer least.
  const book = { 'f:0': 2, 'f:1': 0.9, 'f:2': 0.6, 'f:3': 0.5, 'f:4': 0.3 };

  it('reads which query terms a chunk holds, with their IDF', () => {
    const matches = lexical.queryTermMatches('learn from the salt road', ['c'], ['f:0', 'f:1', 'f:2', 'nope']);
    assert.deepEqual([...matches.keys()].sort(), ['f:0', 'f:1', 'f:2'], 'a chunk not indexed is left out');
    // Terms in query order, stop-words dropped: learn, salt, road.
    assert.equal(matches.get('f:0')!.mask, 0b110);
    assert.equal(matches.get('f:1')!.mask, 0b001);
    assert.equal(matches.get('f:2')!.mask, 0);
    const weights = matches.get('f:0')!.weights;
    assert.equal(weights.length, 3);
    assert.ok(weights.every((weight) => weight > 0));
    assert.deepEqual(lexical.queryTermMatches('zebra', ['c'], ['f:0']).get('f:0'), { mask: 0, weights: [0] }, 'a term no chunk holds');
  });

  it('measures the share of the query a question adds to the turn it follows', () => {
    const matches = lexical.queryTermMatches('learn from the salt road', ['c'], ['f:0', 'f:1']);
    const [learn, salt, road] = matches.get('f:0')!.weights as [number, number, number];
    assert.ok(Math.abs(asksFurther(matches, 'f:1', 'f:0') - learn / (learn + salt + road)) < 1e-9);
    assert.equal(asksFurther(matches, 'f:0', 'f:1') > 0, true);
    assert.equal(asksFurther(matches, 'f:3', 'f:0'), 0, 'no terms read for the question');
  });

  it('puts the reply to a follow-up question above the turn that names the topic', () => {
    // Before the rule (no query terms): the topic's turn first, the answer lifted by the thread only.
    assert.deepEqual(ranked('What did Priya learn from The Salt Road?', book, false).slice(0, 2), ['f:0', 'f:2']);
    assert.deepEqual(ranked('What did Priya learn from The Salt Road?', book).slice(0, 2), ['f:2', 'f:0']);
  });

  it('lends only the thread weight when the question adds none of the query, and never backwards', () => {
    // "think" is in no turn, and the question's words ("learn") are not the query's.
    assert.deepEqual(ranked('What did Priya think of The Salt Road?', book).slice(0, 2), ['f:0', 'f:2']);
    // The topic after the answer (offsets reversed): the follow-up lends forwards only.
    assert.deepEqual(ranked('What did Priya learn from The Salt Road?', { 'f:0': 0.6, 'f:1': 0.9, 'f:2': 2 }).slice(0, 1), ['f:2']);
    // The question's words are the query's ("finding"): its reply answers, not the news before it.
    assert.equal(ranked("How is Omar's sister finding Lisbon?", { 'g:0': 2, 'g:1': 0.9, 'g:2': 0.6 })[0], 'g:2');
  });
});

describe('turn lenders', () => {
  it('are the candidates one and two turns from a leader, in its memory, that are not leaders', () => {
    const candidates = new Map(['a:0', 'a:1', 'a:2', 'a:3', 'a:5', 'a:9', 'b:4', 'b:6', 'x'].map((id) => [id, {}]));
    assert.deepEqual(turnLenders(new Set(['a:3', 'b:5']), candidates).sort(), ['a:1', 'a:2', 'a:5', 'b:4', 'b:6']);
    assert.deepEqual(turnLenders(new Set(['a:1', 'a:2']), candidates).sort(), ['a:0', 'a:3'], 'leaders lend to each other already');
    assert.deepEqual(turnLenders(new Set(['x']), candidates), [], 'no turn position');
  });

  it('keep a leader where the full ranking put it when the ranking is narrowed to the leaders', () => {
    // The follow-up lifts f:2 above f:0; narrowed to the two, without its question f:1, it would fall back.
    const turns: Record<string, string> = {
      'f:0': 'Priya: I finally finished reading "The Salt Road" last night, what a book.',
      'f:1': 'Omar: Nice! What did you learn from it?',
      'f:2': 'Priya: Mostly that patience pays off, and that home is the people around you.',
    };
    const lexical = new LexicalIndex();
    const partition = lexical.createPartition('c');
    for (const [chunkId, text] of Object.entries(turns)) partition.upsert(chunkId, 'f', text);
    const source = {
      isQuestion: (id: string) => turns[id]?.endsWith('?') ?? false,
      speakerOf: (id: string) => turnSpeaker(turns[id] ?? ''),
      answersOf: () => 0,
    };
    const scores: Record<string, number> = { 'f:0': 2, 'f:1': 0.3, 'f:2': 0.6 };
    const queryTerms = lexical.queryTermMatches('What did Priya learn from The Salt Road?', ['c'], ['f:0', 'f:1']);
    const ranked = (ids: string[]) =>
      rerankTurns(
        ids.map((chunkId) => ({ chunkId, memoryId: 'f', score: scores[chunkId]!, breakdown: {} })),
        new Map(),
        source,
        { queryTerms },
      ).map((entry) => entry.chunkId);
    assert.deepEqual(ranked(['f:0', 'f:1', 'f:2']).slice(0, 2), ['f:2', 'f:0']);
    assert.deepEqual(ranked(['f:0', 'f:2']), ['f:0', 'f:2'], 'the leaders alone');
    const leaders = new Set(['f:0', 'f:2']);
    const kept = [...leaders, ...turnLenders(leaders, new Map(Object.keys(scores).map((id) => [id, {}])))];
    assert.deepEqual(ranked(kept).slice(0, 2), ['f:2', 'f:0']);
  });
});

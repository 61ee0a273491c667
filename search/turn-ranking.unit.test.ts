import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Candidate, FusedCandidate } from './fusion.js';
import { periodMatch, queryPeriod, turnDates } from './turn-dates.js';
import { expandTurnCandidates, rerankTurns, type TurnSource } from './turn-ranking.js';
import { querySpeakers, turnSpeaker } from './turn-speakers.js';

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
    chunks: () => Object.keys(texts).map((id) => [id, 'm'] as [string, string]),
  });
  const fused = (scores: Record<string, number>): FusedCandidate[] =>
    Object.entries(scores).map(([chunkId, score]) => ({ chunkId, memoryId: 'm', score, breakdown: {} }));

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
    assert.deepEqual([...dated], [['m:2', 1]]);
  });

  it('lifts the reply to a matching question above the question itself', () => {
    const ranked = rerankTurns(fused({ 'm:0': 1, 'm:1': 0.6, 'm:2': 0.1 }), new Map(), source({}));
    assert.deepEqual(
      ranked.map((entry) => entry.chunkId),
      ['m:1', 'm:0', 'm:2'],
    );
    assert.equal(ranked[0]!.score, 0.92, '0.6 + 0.8 × (1 − 0.6)');
    assert.equal(ranked[1]!.score, 0.9, 'the question: 1 − 0.1');
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

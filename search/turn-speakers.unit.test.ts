import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TurnFacts } from './turn-facts.js';
import { querySpeakers, turnSpeaker } from './turn-speakers.js';

describe('turn speakers', () => {
  it('reads the speaker of a turn from its "<speaker>: " prefix', () => {
    const cases: [string, string | undefined][] = [
      ['Caroline: I went to a support group yesterday.', 'caroline'],
      ['Dr. Ann Lee: Take two of these.', 'dr. ann lee'],
      ["Jean-Luc O'Neil: Bonjour!", "jean-luc o'neil"],
      ['Note: the meeting moved to 3 pm.', 'note'],
      ['I: short', undefined],
      ['caroline: lower-case is not a name', undefined],
      ['The plan for today: ship it', undefined],
      ['Time 10:30: start', undefined],
      ['No prefix at all', undefined],
    ];
    for (const [text, speaker] of cases) assert.equal(turnSpeaker(text), speaker, text);
  });

  it('takes the named speakers out of the query, and says whether it names only some of them', () => {
    const speakers = ['caroline', 'melanie'];
    assert.deepEqual(querySpeakers("What is Caroline's identity?", speakers), {
      named: new Set(['caroline']),
      partial: true,
      text: 'What is identity?',
    });
    assert.deepEqual(querySpeakers('When did melanie paint a sunrise?', speakers)?.named, new Set(['melanie']));
    assert.deepEqual(querySpeakers('What do Caroline and Melanie both like?', speakers), {
      named: new Set(['caroline', 'melanie']),
      partial: false,
      text: 'What do and both like?',
    });
    assert.equal(querySpeakers('What did the group discuss?', speakers), null, 'none named');
    assert.equal(querySpeakers('Caroline?', speakers), null, 'nothing left to search');
    assert.equal(querySpeakers('What did Carolines do?', speakers), null, 'whole names only');
    assert.equal(querySpeakers('What did Caroline do?', ['caroline'])?.partial, false, 'the only speaker');
    assert.deepEqual(
      querySpeakers('Where does Ann Lee work?', ['ann lee', 'ann', 'bob'])?.named,
      new Set(['ann lee']),
      'longest name first',
    );
  });

  it('knows the speakers of a collection: names heading two turns or more, kept as turns come and go', () => {
    const facts = new TurnFacts();
    facts.createPartition('c');
    facts.upsert('c', 'm1:0', 'm1', 'Caroline: Hi!', null);
    facts.upsert('c', 'm1:1', 'm1', 'Melanie: Hey Caroline!', null);
    facts.upsert('c', 'm2:0', 'm2', 'Caroline: How are you?', null);
    facts.upsert('c', 'm2:1', 'm2', 'Melanie: Fine.', null);
    facts.upsert('c', 'm2:2', 'm2', 'Note: once', null);
    assert.deepEqual([...facts.speakers(['c'])].sort(), ['caroline', 'melanie']);
    assert.equal(facts.speakerOf(['c'], 'm1:1'), 'melanie');
    const withAll = facts.bytes('c');
    facts.removeMemory('m2');
    assert.deepEqual([...facts.speakers(['c'])], [], 'one turn each is left');
    assert.ok(facts.bytes('c') < withAll && facts.bytes('c') > 0, 'bytes follow the removals');
    facts.upsert('c', 'm1:0', 'm1', 'Caroline: Hi again!', null);
    facts.upsert('c', 'm1:0', 'm1', 'Caroline: Hi once more!', null);
    assert.deepEqual([...facts.speakers(['c'])], [], 'a re-upserted turn counts once');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findNamedSpans } from './named-spans.js';
import { parseSentences, prepareText } from './parse.js';

/** sentence → its spans as `name | category | surface | gender`, left to right. */
const ROWS: [sentence: string, spans: string[]][] = [
  [
    'Dr. Jane Doe met Mr. Tom Hardy in Porto, Portugal on Monday, June 5, 2024.',
    [
      'Jane Doe | person | Dr. Jane Doe | female',
      'Tom Hardy | person | Mr. Tom Hardy | male',
      'Porto, Portugal | place | Porto, Portugal | unknown',
      'Monday, June 5, 2024 | date | Monday, June 5, 2024 | unknown',
    ],
  ],
  [
    'Email alice@example.com or visit https://example.com for the $7.5 billion deal.',
    [
      'alice@example.com | email | alice@example.com | unknown',
      'https://example.com | url | https://example.com | unknown',
      '$7.5 billion | money | $7.5 billion | unknown',
    ],
  ],
  // The common words compromise tags as part of a place are no part of its name; "June 2024" pins a time.
  [
    'The city of Porto opened a new metro line in June 2024.',
    ['Porto | place | Porto | unknown', 'June 2024 | date | June 2024 | unknown'],
  ],
  // A number with a unit, or a percent, is a quantity; "last week" pins a time.
  [
    'We walked 3 kg of apples and 40% of the way last week.',
    ['3 kg | quantity | 3 kg | unknown', '40% | quantity | 40% | unknown', 'last week | date | last week | unknown'],
  ],
  // The honorific is dropped from the name and says the gender; a bare duration ("the year") is no date.
  ['Mrs. Alvarez moved to Berlin the year before.', ['Alvarez | person | Mrs. Alvarez | female', 'Berlin | place | Berlin | unknown']],
  // A period compromise did not split at ends the organisation's name.
  ['Acme Corp. Alice Smith joined.', ['Acme Corp | organization | Acme Corp | unknown', 'Alice Smith | person | Alice Smith | female']],
  // A possessive continues an organisation's name only into a capitalised word.
  [
    "Google's office is near Guy's Hospital.",
    ['Google | organization | Google | unknown', "Guy's Hospital | organization | Guy's Hospital | unknown"],
  ],
  // A clause opener compromise tags as part of a name ("Unless Corp") starts no span.
  ['When Priya Shah arrived, Unless Corp closed.', []],
  ['Nothing here has a name at all.', []],
];

describe('findNamedSpans', () => {
  for (const [sentence, expected] of ROWS) {
    it(sentence, () => {
      const [parsed, ...more] = parseSentences(prepareText(sentence));
      assert.ok(parsed);
      assert.equal(more.length, 0);
      const spans = findNamedSpans(parsed.tokens);
      assert.deepEqual(
        spans.map((span) => `${span.name} | ${span.category} | ${span.surface} | ${span.gender}`),
        expected,
      );
      // Left to right and non-overlapping.
      for (let i = 1; i < spans.length; i++) assert.ok(spans[i - 1]!.end <= spans[i]!.start);
    });
  }
});

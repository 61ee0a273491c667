import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { topLevelObjectSpan } from './json-span.js';

const spanOf = (text: string): string | null => {
  const bytes = Buffer.from(text);
  const span = topLevelObjectSpan(bytes, 'snapshot');
  return span ? bytes.subarray(span.start, span.end).toString() : null;
};

describe('topLevelObjectSpan', () => {
  const found: [name: string, text: string, span: string][] = [
    ['the only member', '{"snapshot":{"a":1}}', '{"a":1}'],
    ['after a query', '{"query":"where","snapshot":{"a":[1,2,{"b":"}"}]}}', '{"a":[1,2,{"b":"}"}]}'],
    ['before other members', '{"snapshot":{},"query":"x","limit":5}', '{}'],
    ['with spaces and newlines', ' \n{ "query" : "q" ,\r\n\t"snapshot" : { "a" : "b" } \n}\n', '{ "a" : "b" }'],
    ['after a byte order mark', '\uFEFF{"snapshot":{"a":1}}', '{"a":1}'],
    ['strings holding brackets and escaped quotes', '{"q":"a\\"}{","snapshot":{"t":"x\\\\","u":"\\"]"}}', '{"t":"x\\\\","u":"\\"]"}'],
    ['numbers, literals and arrays around it', '{"a":-1.5e3,"b":true,"c":null,"d":[[],{}],"snapshot":{"n":[1]}}', '{"n":[1]}'],
    ['a nested member of the same name left alone', '{"x":{"snapshot":{"no":1}},"snapshot":{"yes":1}}', '{"yes":1}'],
    ['non-ASCII text', '{"q":"ørret ✓","snapshot":{"t":"日本"}}', '{"t":"日本"}'],
  ];
  for (const [name, text, span] of found) {
    it(`finds the value: ${name}`, () => {
      assert.equal(spanOf(text), span);
      // What the span holds is what a parser gives for the member.
      assert.deepEqual(JSON.parse(span), (JSON.parse(text.replace(/^\uFEFF/, '')) as { snapshot: unknown }).snapshot);
    });
  }

  // Each of these answers null, and the caller parses the whole text as it did before.
  const refused: [name: string, text: string][] = [
    ['no such member', '{"query":"x"}'],
    ['an empty object', '{}'],
    ['an array at the top', '[{"snapshot":{}}]'],
    ['a string at the top', '"snapshot"'],
    ['the member twice (a parser keeps the last)', '{"snapshot":{"a":1},"snapshot":{"b":2}}'],
    ['the key spelled with an escape', '{"snap\\u0073hot":{"a":1}}'],
    ['another key with an escape', '{"q\\"":1,"snapshot":{}}'],
    ['the value not an object', '{"snapshot":[1]}'],
    ['the value a string', '{"snapshot":"{}"}'],
    ['the value null', '{"snapshot":null}'],
    ['the key only inside a string', '{"q":"\\"snapshot\\":{}"}'],
    ['a truncated value', '{"snapshot":{"a":"b"'],
    ['an unterminated string', '{"q":"abc,"snapshot":{}}'],
    ['a missing colon', '{"snapshot" {"a":1}}'],
    ['a missing comma', '{"q":1 "snapshot":{}}'],
    ['bytes after the object', '{"snapshot":{}} {"snapshot":{}}'],
    ['a trailing comma', '{"snapshot":{},}'],
    ['a key not a string', '{snapshot:{}}'],
    ['an empty text', ''],
    ['only spaces', '   '],
  ];
  for (const [name, text] of refused) {
    it(`answers null: ${name}`, () => assert.equal(spanOf(text), null));
  }
});

/** The vector codecs' checks that the open runs on every vector without decoding it. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeFloat16, encodeFloat16, isBase64, isFloat16Vector } from './vectors.js';

describe('isFloat16Vector', () => {
  it('accepts exactly what decodeFloat16 decodes, for every half value and for wrong lengths', () => {
    // Every one of the 65,536 half-precision bit patterns, as one-dimension vectors.
    for (let half = 0; half < 0x10000; half++) {
      const bytes = Buffer.alloc(2);
      bytes.writeUInt16LE(half);
      const encoded = bytes.toString('base64');
      assert.equal(isFloat16Vector(encoded, 1), decodeFloat16(encoded, 1) !== null, `0x${half.toString(16)}`);
    }
    const vector = encodeFloat16(new Float32Array([0.5, -1, 65504, 1e-8]));
    assert.equal(isFloat16Vector(vector, 4), true);
    assert.equal(isFloat16Vector(vector, 3), false, 'a wrong dimension count is refused');
    assert.equal(isFloat16Vector(vector, 5), false);
    assert.equal(isFloat16Vector(encodeFloat16(new Float32Array([1, Number.NaN])), 2), false, 'a NaN is refused');
    assert.equal(isFloat16Vector(encodeFloat16(new Float32Array([1, 1e6])), 2), false, 'an overflow to infinity is refused');
  });
});

describe('isBase64', () => {
  const pattern = /^[A-Za-z0-9+/]*={0,2}$/;
  const cases = [
    '',
    'AAAA',
    'AB==',
    'ABC=',
    'A===',
    '=',
    '==',
    '===',
    'AA=A',
    'AA-_',
    'AA A',
    'AA\n',
    '\nAA',
    'é',
    'AA/+',
    'Zz09',
    'AA=\n',
    '+/+/',
  ];
  it('accepts what /^[A-Za-z0-9+/]*={0,2}$/ accepts', () => {
    for (const text of cases) assert.equal(isBase64(text), pattern.test(text), JSON.stringify(text));
    for (let code = 0; code < 0x180; code++) {
      const char = String.fromCharCode(code);
      for (const text of [`AB${char}D`, `ABC${char}`, `${char}`]) assert.equal(isBase64(text), pattern.test(text), JSON.stringify(text));
    }
  });
});

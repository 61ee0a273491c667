import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CanonicalJsonError, canonicalJson, canonicalJsonBytes, canonicalJsonPieces, STRING_PIECE_CHARS } from './canonical-json.js';

describe('canonicalJson', () => {
  it('sorts object keys recursively and keeps array order', () => {
    const value = { b: 1, a: { d: [3, { z: 1, y: 2 }, 'x'], c: null }, aa: [], A: {} };
    assert.equal(canonicalJson(value), '{"A":{},"a":{"c":null,"d":[3,{"y":2,"z":1},"x"]},"aa":[],"b":1}');
  });

  it('orders keys by UTF-16 code units (astral before U+E000–U+FFFF, unlike code point order)', () => {
    const value = { '\uE000': 1, '😀': 2, é: 3, a: 4, B: 5, '': 6, ab: 7 };
    assert.equal(canonicalJson(value), '{"":6,"B":5,"a":4,"ab":7,"é":3,"😀":2,"\uE000":1}');
  });

  it('sorts integer-like keys as strings (JS would enumerate them first, numerically)', () => {
    assert.equal(canonicalJson({ a: 3, 10: 1, 9: 2 }), '{"10":1,"9":2,"a":3}');
  });

  it('writes "__proto__" and prototype-less objects as any other key and object', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { b: 1, a: 2 });
    const proto = JSON.parse('{"__proto__":{"x":1},"a":0}') as unknown;
    assert.equal(canonicalJson({ bare, proto }), '{"bare":{"a":2,"b":1},"proto":{"__proto__":{"x":1},"a":0}}');
  });

  it('gives the same text whether a key only looks like an index or is one ("01", "1", "1a")', () => {
    assert.equal(canonicalJson({ '1a': 0, '01': 1, 1: 2, b: { 2: 'x', 10: 'y' } }), '{"01":1,"1":2,"1a":0,"b":{"10":"y","2":"x"}}');
  });

  it('writes no whitespace and literals as JSON', () => {
    assert.equal(canonicalJson({ t: true, f: false, n: null, s: 'a b' }), '{"f":false,"n":null,"s":"a b","t":true}');
    assert.equal(canonicalJson([]), '[]');
    assert.equal(canonicalJson({}), '{}');
    assert.equal(canonicalJson('top'), '"top"');
  });

  it('escapes strings exactly like JSON.stringify', () => {
    const text = '"\\/\b\f\n\r\t\u0000\u0001\u001f\u007f';
    assert.equal(canonicalJson(text), '"\\"\\\\/\\b\\f\\n\\r\\t\\u0000\\u0001\\u001f\u007f"');
    assert.equal(canonicalJson(text), JSON.stringify(text));
    assert.equal(canonicalJson({ 'k"\n': 1 }), '{"k\\"\\n":1}');
  });

  it('emits non-ASCII, U+2028 and U+2029 raw, and signs their UTF-8 bytes', () => {
    const text = 'é€😀\u2028\u2029中';
    assert.equal(canonicalJson(text), `"${text}"`);
    assert.equal(canonicalJsonBytes({ k: 'é😀' }).toString('hex'), '7b226b223a22c3a9f09f9880227d');
  });

  it('writes numbers as JSON.stringify does', () => {
    const cases: [number, string][] = [
      [0, '0'],
      [-0, '0'],
      [42, '42'],
      [-7, '-7'],
      [2 ** 53 - 1, '9007199254740991'],
      [100, '100'],
      [1e20, '100000000000000000000'],
      [1e21, '1e+21'],
      [0.1, '0.1'],
      [-2.5, '-2.5'],
      [1 / 3, '0.3333333333333333'],
      [0.000001, '0.000001'],
      [1e-7, '1e-7'],
      [1.5e-7, '1.5e-7'],
      [5e-324, '5e-324'],
      [1.7976931348623157e308, '1.7976931348623157e+308'],
    ];
    for (const [value, expected] of cases) assert.equal(canonicalJson(value), expected, String(value));
  });

  it('omits undefined object members, as JSON.stringify does', () => {
    assert.equal(canonicalJson({ a: undefined, b: 1 }), '{"b":1}');
  });

  it('accepts null-prototype objects and repeated (non-circular) references', () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare.z = 1;
    const shared = { x: 1 };
    assert.equal(canonicalJson({ bare, p: shared, q: shared }), '{"bare":{"z":1},"p":{"x":1},"q":{"x":1}}');
  });

  it('matches JSON.stringify for values whose keys are already sorted', () => {
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const atoms = ['', 'a', '"', '\\', '\n', 'é', '😀', '\u2028', '\u001f', 0, -1.25, 1e-9, 3e21, 12345, true, false, null];
    const make = (depth: number): unknown => {
      const roll = random();
      if (depth > 3 || roll < 0.4) return atoms[Math.floor(random() * atoms.length)];
      if (roll < 0.7) return Array.from({ length: Math.floor(random() * 4) }, () => make(depth + 1));
      // Prefixed: JS enumerates integer-like keys first, whatever the insertion order.
      const keys = Array.from({ length: Math.floor(random() * 4) }, () => `k${String(atoms[Math.floor(random() * atoms.length)])}`).sort();
      return Object.fromEntries(keys.map((key) => [key, make(depth + 1)]));
    };
    for (let i = 0; i < 500; i += 1) {
      const value = make(0);
      assert.equal(canonicalJson(value), JSON.stringify(value));
    }
  });

  describe('rejects', () => {
    const rejected: [string, unknown][] = [
      ['NaN', { n: NaN }],
      ['Infinity', { n: Infinity }],
      ['-Infinity', [-Infinity]],
      ['top-level undefined', undefined],
      ['undefined in an array', [1, undefined]],
      ['a sparse array hole', [1, , 3]], // eslint-disable-line no-sparse-arrays
      ['BigInt', { n: 1n }],
      ['a function', { f: () => 1 }],
      ['a symbol', { s: Symbol('s') }],
      ['a Date', { ts: new Date(0) }],
      ['a Map', new Map([['a', 1]])],
      ['a Buffer', Buffer.from('x')],
      [
        'a class instance',
        new (class Point {
          x = 1;
        })(),
      ],
      ['an object with toJSON', { toJSON: () => 'x' }],
      ['a lone high surrogate', 'a\uD83D'],
      ['a lone low surrogate', '\uDE00b'],
      ['a lone surrogate in a key', { '\uD800': 1 }],
      ['a boxed string', { s: new String('x') }],
    ];
    for (const [what, value] of rejected) {
      it(what, () => {
        assert.throws(() => canonicalJson(value), CanonicalJsonError);
      });
    }

    it('a circular reference, naming where', () => {
      const loop: Record<string, unknown> = { a: 1 };
      loop.self = { back: loop };
      assert.throws(() => canonicalJson(loop), { name: 'CanonicalJsonError', message: /\$\.self\.back: circular/ });
    });

    it('with the path of the offending value', () => {
      assert.throws(() => canonicalJson({ payload: { list: [0, NaN] } }), { message: /\$\.payload\.list\[1\]/ });
      assert.throws(() => canonicalJson({ 'odd key': NaN }), { message: /\$\["odd key"\]/ });
    });
  });

  describe('canonicalJsonPieces (a large document made piece by piece)', () => {
    const values: unknown[] = [
      { b: [1, { z: 'x\n', a: [] }, null], a: { '😀': 2, '\uE000': 1 }, skipped: undefined, e: {}, n: -0.5 },
      [[], [[1, 2], { k: [true, false] }], 'é'],
      'a string',
      3,
      null,
      { body: { episodes: [{ id: 'e', chunks: [{ index: 0, text: 'Ada "Lovelace"', vector: null }], mentions: '0,0,3' }], facts: [] } },
    ];
    for (const depth of [0, 1, 2, 3, 6]) {
      it(`joins to exactly canonicalJson at depth ${depth}`, () => {
        for (const value of values) assert.equal([...canonicalJsonPieces(value, depth)].join(''), canonicalJson(value));
      });
    }

    it('opens members one by one down to the depth asked', () => {
      assert.deepEqual([...canonicalJsonPieces({ b: [1, 2], a: 'x' }, 2)], ['{', '"a":', '"x"', ',"b":', '[', '1', ',', '2', ']', '}']);
    });

    it('keeps a container in one piece when worthOpening says so, the text unchanged', () => {
      const value = { small: { b: 1, a: [1, 2] }, large: [{ z: 1 }, { y: 2 }] };
      const opened = (container: object, level: number) => level === 0 || Array.isArray(container);
      assert.deepEqual(
        [...canonicalJsonPieces(value, 3, opened)],
        ['{', '"large":', '[', '{"z":1}', ',', '{"y":2}', ']', ',"small":', '{"a":[1,2],"b":1}', '}'],
      );
      assert.equal([...canonicalJsonPieces(value, 3, opened)].join(''), canonicalJson(value));
    });

    it("writes a long string in pieces (a device episode's 8 MB of mention rows), the text unchanged and no surrogate pair split", () => {
      // A surrogate pair straddles the first boundary; escapes and non-ASCII follow.
      const long = `${'a'.repeat(STRING_PIECE_CHARS - 1)}😀${'é\n"\\;,'.repeat(STRING_PIECE_CHARS / 2)}`;
      const value = { mentions: long, id: 'e' };
      const pieces = [...canonicalJsonPieces(value, 2)];
      assert.equal(pieces.join(''), canonicalJson(value));
      const stringPieces = pieces.slice(pieces.indexOf(',"mentions":') + 1, -1);
      assert.ok(stringPieces.length >= 5, `${stringPieces.length} pieces`);
      // At most STRING_PIECE_CHARS characters each before escaping (an escape writes at most 6).
      assert.ok(Math.max(...stringPieces.map((piece) => piece.length)) <= 6 * STRING_PIECE_CHARS);
      assert.ok(stringPieces[1]!.endsWith('a'), 'the pair went to the next piece whole');
      // Beyond the levels opened, it stays one piece.
      assert.ok([...canonicalJsonPieces(value, 1)].includes(JSON.stringify(long)));
    });

    it('refuses a lone surrogate in a long string wherever it falls, as canonicalJson does', () => {
      for (const long of [
        `${'a'.repeat(STRING_PIECE_CHARS - 1)}\uD800b${'c'.repeat(STRING_PIECE_CHARS)}`,
        `${'a'.repeat(STRING_PIECE_CHARS)}\uDC00`,
        `${'a'.repeat(2 * STRING_PIECE_CHARS)}\uD800`,
      ]) {
        assert.throws(() => canonicalJson({ s: long }), { message: /\$\.s: string contains a lone surrogate/ });
        assert.throws(() => [...canonicalJsonPieces({ s: long }, 2)], { message: /\$\.s: string contains a lone surrogate/ });
      }
    });

    it('refuses what canonicalJson refuses, at any depth, naming where', () => {
      const loop: Record<string, unknown> = { a: 1 };
      loop.self = { back: loop };
      for (const depth of [1, 4]) {
        assert.throws(() => [...canonicalJsonPieces(loop, depth)], { name: 'CanonicalJsonError', message: /\$\.self\.back: circular/ });
        assert.throws(() => [...canonicalJsonPieces({ list: [0, NaN] }, depth)], { message: /\$\.list\[1\]/ });
        assert.throws(() => [...canonicalJsonPieces({ d: new Date(0) }, depth)], CanonicalJsonError);
        // eslint-disable-next-line no-sparse-arrays -- the hole is the case
        assert.throws(() => [...canonicalJsonPieces([1, , 3], depth)], { message: /sparse array hole/ });
      }
    });
  });
});

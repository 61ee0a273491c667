import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { onnxSessionOptions } from './onnx-session.js';

describe('onnxSessionOptions', () => {
  const noSpinning = { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } };
  const cases: { threads: number | undefined; expected: object }[] = [
    { threads: undefined, expected: { extra: noSpinning } },
    { threads: 0, expected: { extra: noSpinning } },
    { threads: 1, expected: { intraOpNumThreads: 1, interOpNumThreads: 1, extra: noSpinning } },
    { threads: 4, expected: { intraOpNumThreads: 4, interOpNumThreads: 1, extra: noSpinning } },
  ];
  for (const { threads, expected } of cases) {
    it(`threads ${String(threads)}: onnxruntime's count unless given, and its threads never spin`, () => {
      assert.deepEqual(onnxSessionOptions(threads), expected);
    });
  }
});

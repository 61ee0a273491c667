import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { supportsRetryableWrites, unknownServerTracker } from './db.js';

describe('supportsRetryableWrites', () => {
  const cases: [string, Record<string, unknown>, boolean][] = [
    ['replica set member', { isWritablePrimary: true, setName: 'rs0', logicalSessionTimeoutMinutes: 30 }, true],
    ['mongos', { isWritablePrimary: true, msg: 'isdbgrid', logicalSessionTimeoutMinutes: 30 }, true],
    ['standalone mongod (sessions, no replication)', { isWritablePrimary: true, logicalSessionTimeoutMinutes: 30 }, false],
    ['the stand-in (no sessions)', { isWritablePrimary: true, maxWireVersion: 8 }, false],
    ['replica set without sessions', { isWritablePrimary: true, setName: 'rs0' }, false],
    ['session timeout of the wrong type', { setName: 'rs0', logicalSessionTimeoutMinutes: '30' }, false],
  ];
  for (const [label, hello, expected] of cases) {
    it(`${expected ? 'turns on' : 'leaves off'} retryable writes for a ${label}`, () => {
      assert.equal(supportsRetryableWrites(hello), expected);
    });
  }
});

describe('unknownServerTracker: when a client counts as unable to reach any server', () => {
  type Step = ['observe', string, string] | ['forget', string] | ['wait', number] | ['reset'];
  const cases: { label: string; steps: Step[]; stuckAfter3s: boolean }[] = [
    {
      label: 'a standalone server Unknown for 3 s',
      steps: [
        ['observe', 'a', 'Standalone'],
        ['observe', 'a', 'Unknown'],
        ['wait', 3000],
      ],
      stuckAfter3s: true,
    },
    {
      label: 'Unknown for less than 3 s',
      steps: [
        ['observe', 'a', 'Unknown'],
        ['wait', 2999],
      ],
      stuckAfter3s: false,
    },
    {
      label: 'Unknown again and again: counted from the first',
      steps: [
        ['observe', 'a', 'Unknown'],
        ['wait', 2000],
        ['observe', 'a', 'Unknown'],
        ['wait', 1000],
      ],
      stuckAfter3s: true,
    },
    {
      label: 'known again in between: counted afresh',
      steps: [
        ['observe', 'a', 'Unknown'],
        ['wait', 2000],
        ['observe', 'a', 'Standalone'],
        ['observe', 'a', 'Unknown'],
        ['wait', 1000],
      ],
      stuckAfter3s: false,
    },
    {
      label: 'one replica set member down, the others known',
      steps: [
        ['observe', 'a', 'RSPrimary'],
        ['observe', 'b', 'RSSecondary'],
        ['observe', 'b', 'Unknown'],
        ['wait', 60_000],
      ],
      stuckAfter3s: false,
    },
    {
      label: 'every replica set member Unknown',
      steps: [
        ['observe', 'a', 'Unknown'],
        ['observe', 'b', 'Unknown'],
        ['wait', 3000],
      ],
      stuckAfter3s: true,
    },
    {
      label: 'the only known member removed from the topology',
      steps: [
        ['observe', 'a', 'RSPrimary'],
        ['observe', 'b', 'Unknown'],
        ['forget', 'a'],
        ['wait', 3000],
      ],
      stuckAfter3s: true,
    },
    { label: 'no server seen yet', steps: [['wait', 60_000]], stuckAfter3s: false },
    {
      label: 'every server removed from the topology (the client closing)',
      steps: [
        ['observe', 'a', 'Unknown'],
        ['forget', 'a'],
        ['wait', 3000],
      ],
      stuckAfter3s: false,
    },
    { label: 'after a reconnect (reset)', steps: [['observe', 'a', 'Unknown'], ['wait', 5000], ['reset']], stuckAfter3s: false },
  ];
  for (const { label, steps, stuckAfter3s } of cases) {
    it(`${stuckAfter3s ? 'stuck' : 'not stuck'}: ${label}`, () => {
      let clock = 0;
      const tracker = unknownServerTracker(() => clock);
      for (const step of steps) {
        if (step[0] === 'observe') tracker.observe(step[1], step[2]);
        else if (step[0] === 'forget') tracker.forget(step[1]);
        else if (step[0] === 'wait') clock += step[1];
        else tracker.reset();
      }
      assert.equal(tracker.longerThan(3000), stuckAfter3s);
    });
  }
});

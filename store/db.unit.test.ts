import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { supportsRetryableWrites } from './db.js';

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

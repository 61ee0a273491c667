import assert from 'node:assert/strict';
import { it } from 'node:test';
import { stagesDoneBefore } from './ingest.js';

it("reads from an earlier attempt's last heartbeat how many single-pass stages it finished", () => {
  const cases: [unknown, number][] = [
    [undefined, 0],
    [null, 0],
    ['embed', 0],
    [{ stage: 42 }, 0],
    [{ stage: 'read', current: 0, total: 1 }, 0],
    [{ stage: 'extract', file: 0, current: 3, total: 9 }, 0],
    [{ stage: 'chunk', current: 1, total: 1 }, 1],
    [{ stage: 'structure', current: 4, total: 9 }, 1],
    [{ stage: 'workflows' }, 2],
    [{ stage: 'embed', current: 32, total: 160 }, 3],
    [{ stage: 'complete' }, 0],
  ];
  for (const [details, done] of cases) assert.equal(stagesDoneBefore(details), done, JSON.stringify(details));
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withSerialisableError } from './temporal-logging.js';

describe('withSerialisableError', () => {
  it('moves an Error under err, where pino prints its message and stack', () => {
    const error = new Error('heartbeat timeout');
    const meta = withSerialisableError({ activityType: 'embedAndIndex', error });
    assert.equal(meta.err, error);
    assert.equal('error' in meta, false);
    assert.equal(meta.activityType, 'embedAndIndex');
  });

  it('leaves metadata without an Error as it is', () => {
    assert.deepEqual(withSerialisableError({ error: 'text', attempt: 2 }), { error: 'text', attempt: 2 });
    assert.deepEqual(withSerialisableError(undefined), {});
  });
});

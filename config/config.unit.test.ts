import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ConfigError, loadConfig } from './index.js';

it('applies defaults and treats empty variables as unset', () => {
  const config = loadConfig({ MONGODB_URI: '', PORT: '9000' });
  assert.equal(config.MONGODB_URI, undefined);
  assert.equal(config.PORT, 9000);
  assert.equal(config.ROLE, 'all');
  assert.equal(config.EMBEDDING_MODEL, 'Xenova/e5-small-v2');
});

it('names every invalid variable', () => {
  assert.throws(
    () => loadConfig({ PORT: 'eighty', ROLE: 'boss' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /PORT/);
      assert.match(error.message, /ROLE/);
      return true;
    },
  );
});

it('reads the workflow read backend switch: mongodb by default, none to turn the reads off', () => {
  assert.equal(loadConfig({}).GRAPH_READ_BACKEND, 'mongodb');
  assert.equal(loadConfig({ GRAPH_READ_BACKEND: 'none' }).GRAPH_READ_BACKEND, 'none');
  assert.throws(
    () => loadConfig({ GRAPH_READ_BACKEND: 'neo4j' }),
    (error: unknown) => error instanceof ConfigError && /GRAPH_READ_BACKEND/.test(error.message),
  );
});

/**
 * The OpenAPI export against the Koa routers: every registered route is described or excluded on
 * purpose (spec "Versioning" 5), every described route exists, the committed docs/openapi.json is
 * what `npm run openapi` writes today, and the document compiles as JSON Schema 2020-12.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type Router from '@koa/router';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { loadConfig, projectRoot } from '../../config/index.js';
import { createLogger } from '../../core/logger.js';
import { createApp } from '../app.js';
import type { ApiServices } from '../context.js';
import { defaultOpenApiDocument } from './export.js';
import { describeRoutes, isExcluded } from './registry.js';

/** METHOD path for every route the app's routers register (HEAD is implied by GET). */
function registeredRoutes(): Set<string> {
  // Routers only keep their dependencies at construction; no service is called here.
  const app = createApp({ config: loadConfig({}), logger: createLogger('test', 'silent'), services: {} as ApiServices });
  const routes = new Set<string>();
  for (const middleware of app.middleware) {
    const router = (middleware as { router?: Router }).router;
    if (!router) continue;
    for (const layer of router.stack) {
      for (const method of layer.methods) {
        if (method !== 'HEAD') routes.add(`${method} ${layer.path}`);
      }
    }
  }
  return routes;
}

const documented = () => new Set(describeRoutes(loadConfig({})).map((route) => `${route.method.toUpperCase()} ${route.path}`));

test('every registered route is in the OpenAPI document or excluded on purpose', () => {
  const missing = [...registeredRoutes()].filter((route) => !documented().has(route) && !isExcluded(route.split(' ')[1]!));
  assert.deepEqual(missing, [], 'routes without an entry in api/openapi/registry.ts');
});

test('every route in the OpenAPI document exists', () => {
  const registered = registeredRoutes();
  assert.deepEqual(
    [...documented()].filter((route) => !registered.has(route)),
    [],
  );
});

test('the excluded routes are really left out of the document', () => {
  const paths = Object.keys(JSON.parse(defaultOpenApiDocument()).paths as object);
  for (const forbidden of ['/v1/workflows', '/v1/ws/memory-events', '/v1/memory-events/signing-keys']) {
    assert.ok(!paths.some((entry) => entry.startsWith(forbidden)), `${forbidden} must not be exported`);
  }
  for (const [route] of [...registeredRoutes()].map((entry) => entry.split(' ').slice(1))) {
    if (isExcluded(route!)) assert.ok(!paths.includes(route!.replace(/:(\w+)/g, '{$1}')), route);
  }
});

test('docs/openapi.json is up to date (run `npm run openapi`)', () => {
  const committed = readFileSync(path.join(projectRoot(), 'docs', 'openapi.json'), 'utf8');
  assert.equal(committed, defaultOpenApiDocument());
});

test('the document is OpenAPI 3.1 with schemas that compile', () => {
  const document = JSON.parse(defaultOpenApiDocument()) as Record<string, unknown>;
  assert.equal(document.openapi, '3.1.0');
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  assert.doesNotThrow(() => ajv.addSchema({ ...document, $id: 'https://engram.local/openapi.json' }));
  assert.ok(ajv.getSchema('https://engram.local/openapi.json#/components/schemas/MemoryResponse'));
  const security = (document.components as { securitySchemes: Record<string, unknown> }).securitySchemes;
  assert.deepEqual(Object.keys(security), ['apiKey']);
});

/**
 * The schema export and the human docs page, served without an API key (they describe the API,
 * they reveal no data): GET /v1/openapi.json, GET /v1/events.schema.json and GET /docs. The page is Swagger UI from the
 * swagger-ui-dist npm package, served from node_modules: no CDN, works offline.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import Router from '@koa/router';
import type { ApiDeps, AppState } from '../context.js';
import { buildOpenApiDocument } from './document.js';
import { buildEventsSchema } from './events-schema.js';
import { packageVersion } from './export.js';

const require = createRequire(import.meta.url);
const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));

/** The only files of the bundle the page needs, and their types. */
const ASSETS: Record<string, string> = {
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Engram API</title>
<link rel="icon" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="api-docs"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`;

// A separate file rather than an inline script, so a strict Content-Security-Policy holds.
const INIT = `window.ui = SwaggerUIBundle({ url: '/v1/openapi.json', dom_id: '#api-docs', deepLinking: true });\n`;

export function openApiRouter({ config }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  // Built once per process, with this deployment's limits.
  const document = JSON.stringify(buildOpenApiDocument({ limits: config, version: packageVersion() }));
  const eventsSchema = JSON.stringify(buildEventsSchema(packageVersion()));
  const assets = new Map<string, Promise<Buffer>>();

  router.get('/v1/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = document;
  });
  router.get('/v1/events.schema.json', (ctx) => {
    ctx.type = 'application/schema+json';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = eventsSchema;
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'");
    ctx.body = PAGE;
  });
  router.get('/docs/assets/:file', async (ctx) => {
    const file = ctx.params.file ?? '';
    if (file === 'init.js') {
      ctx.type = 'application/javascript; charset=utf-8';
      ctx.body = INIT;
      return;
    }
    const type = ASSETS[file];
    if (!type) return; // the error handler answers route_not_found
    if (!assets.has(file)) assets.set(file, readFile(path.join(SWAGGER_UI_DIR, file)));
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = await assets.get(file)!;
  });
  return router;
}

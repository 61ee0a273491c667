/**
 * Writes the generated schema exports into docs/: openapi.json (the REST API) from the route
 * registry's zod schemas, with the default limits, and events.schema.json (the WebSocket frames).
 * `npm run openapi`; a unit test fails when a committed file is stale.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../config/index.js';
import { defaultOpenApiDocument, eventsSchemaText } from '../api/openapi/export.js';

for (const [file, text] of [
  ['openapi.json', defaultOpenApiDocument()],
  ['events.schema.json', eventsSchemaText()],
] as const) {
  const target = path.join(projectRoot(), 'docs', file);
  writeFileSync(target, text);
  console.log(`wrote ${path.relative(process.cwd(), target)}`);
}

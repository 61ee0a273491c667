/**
 * Writes the generated schema exports into docs/: openapi.json (the REST API) from the route
 * registry's zod schemas, with the default limits. `npm run openapi`; a unit test fails when the
 * committed file is stale.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../config/index.js';
import { defaultOpenApiDocument } from '../api/openapi/export.js';

const target = path.join(projectRoot(), 'docs', 'openapi.json');
writeFileSync(target, defaultOpenApiDocument());
console.log(`wrote ${path.relative(process.cwd(), target)}`);

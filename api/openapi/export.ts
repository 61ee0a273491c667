/** The committed exports: the OpenAPI document built with the default limits, and the events schema, as formatted text. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, projectRoot } from '../../config/index.js';
import { buildOpenApiDocument } from './document.js';
import { buildEventsSchema } from './events-schema.js';

export function packageVersion(): string {
  return (JSON.parse(readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

export function defaultOpenApiDocument(): string {
  const defaults = loadConfig({});
  return `${JSON.stringify(buildOpenApiDocument({ limits: defaults, version: packageVersion() }), null, 2)}\n`;
}

export function eventsSchemaText(): string {
  return `${JSON.stringify(buildEventsSchema(packageVersion()), null, 2)}\n`;
}

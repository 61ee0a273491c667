/**
 * Validates live-event frames against the committed docs/events.schema.json. The suites' raw
 * socket (test/support/ws.ts) checks every frame it receives; a frame that does not match fails
 * the test that received it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { projectRoot } from '../../config/index.js';

let validators: { server: ValidateFunction; client: ValidateFunction; ajv: Ajv2020 } | null = null;

function load() {
  if (validators) return validators;
  const schema = JSON.parse(readFileSync(path.join(projectRoot(), 'docs', 'events.schema.json'), 'utf8')) as { $id: string };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
  ajv.addSchema(schema);
  validators = {
    ajv,
    server: ajv.getSchema(`${schema.$id}#/$defs/ServerFrame`)!,
    client: ajv.getSchema(`${schema.$id}#/$defs/ClientFrame`)!,
  };
  return validators;
}

/** Undefined when the frame matches the schema; otherwise what is wrong. */
export function checkFrame(frame: unknown, side: 'server' | 'client' = 'server'): string | undefined {
  const { ajv, server, client } = load();
  const validate = side === 'server' ? server : client;
  if (validate(frame)) return undefined;
  return `${side} frame does not match docs/events.schema.json: ${ajv.errorsText(validate.errors)}; frame: ${JSON.stringify(frame).slice(0, 400)}`;
}

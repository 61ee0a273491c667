/**
 * Checks real responses against the committed OpenAPI document (docs/openapi.json): every
 * response the suites' Api client receives for a documented operation must have a documented
 * status and a body that validates against that status's schema. Ajv's 2020-12 dialect is the
 * one OpenAPI 3.1 uses.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { projectRoot } from '../../config/index.js';

const DOC_ID = 'https://engram.local/openapi.json';

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  statuses: Set<string>;
}

let compiled: { ajv: Ajv2020; operations: Operation[]; document: Record<string, unknown> } | null = null;

export function openApiDocument(): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(projectRoot(), 'docs', 'openapi.json'), 'utf8')) as Record<string, unknown>;
}

function load() {
  if (compiled) return compiled;
  const document = openApiDocument();
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
  // Refs inside the document are local (#/components/...); made absolute, a response schema
  // compiles on its own while its refs still reach the document's components.
  ajv.addSchema(JSON.parse(JSON.stringify({ ...document, $id: DOC_ID }).replaceAll('"#/components/', `"${DOC_ID}#/components/`)));
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(document.paths as Record<string, Record<string, { responses: object }>>)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    for (const [method, operation] of Object.entries(item)) {
      operations.push({ method: method.toUpperCase(), template, pattern, statuses: new Set(Object.keys(operation.responses)) });
    }
  }
  // Literal segments win over parameters (/v1/memories/search before /v1/memories/{memory_id}).
  operations.sort((a, b) => a.template.split('{').length - b.template.split('{').length);
  compiled = { ajv, operations, document };
  return compiled;
}

const validators = new Map<string, ValidateFunction | null>();

function validatorFor(ajv: Ajv2020, source: Record<string, unknown>, operation: Operation, status: string): ValidateFunction | null {
  const key = `${operation.method} ${operation.template} ${status}`;
  if (validators.has(key)) return validators.get(key)!;
  const document = source as {
    paths: Record<string, Record<string, { responses: Record<string, Record<string, unknown>> }>>;
    components: { responses: Record<string, Record<string, unknown>> };
  };
  let response = document.paths[operation.template]![operation.method.toLowerCase()]!.responses[status]!;
  if (typeof response.$ref === 'string') response = document.components.responses[response.$ref.split('/').pop()!]!;
  const schema = (response.content as Record<string, { schema: object }> | undefined)?.['application/json']?.schema;
  const validate = schema
    ? ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${DOC_ID}#/components/`)) as object)
    : null;
  validators.set(key, validate);
  return validate;
}

/** Undefined when the response matches the document; otherwise what is wrong. */
export function checkResponse(method: string, urlPath: string, status: number, body: unknown): string | undefined {
  const { ajv, operations, document } = load();
  const pathname = new URL(urlPath, 'http://x').pathname;
  const operation = operations.find((candidate) => candidate.method === method && candidate.pattern.test(pathname));
  if (!operation) return undefined;
  if (!operation.statuses.has(String(status))) {
    return `${method} ${operation.template} answered ${status}, which the OpenAPI document does not list (${[...operation.statuses].join(', ')})`;
  }
  const validate = validatorFor(ajv, document, operation, String(status));
  if (!validate || validate(body)) return undefined;
  return `${method} ${operation.template} ${status} does not match the OpenAPI document: ${ajv.errorsText(validate.errors)}; body: ${JSON.stringify(body).slice(0, 500)}`;
}

/**
 * Builds the OpenAPI 3.1 document from the route registry. Schemas come from zod 4's own
 * `z.toJSONSchema` (draft 2020-12, which OpenAPI 3.1 uses as is), so no second copy can drift:
 * request schemas are converted with `io: 'input'` (what a client sends), responses as output.
 */
import { z } from 'zod';
import { describeRoutes, type Limits, type RouteDescription } from './registry.js';
import { ERROR_CODES, ErrorBody } from './responses.js';

type JsonSchema = Record<string, unknown>;

const COMPONENT_REF = (id: string) => `#/components/schemas/${id}`;

const STATUS_TEXT: Record<number, string> = {
  400: 'The request is invalid; `details` names each offending field',
  401: 'Missing or unknown API key (WWW-Authenticate: Bearer)',
  403: 'The signed URL is invalid or expired',
  404: 'No such resource for this tenant (another tenant’s ids look the same as missing ones)',
  409: 'Conflicts with the resource’s current state',
  413: 'The body or a file is larger than its limit; nothing was stored',
  415: 'The body is not JSON',
  422: 'Well-formed but not processable as asked',
  429: 'Rate limit exceeded; retry after the Retry-After header’s seconds, with backoff',
  500: 'Unexpected failure; the request id is in the logs',
  501: 'The feature is not available on this deployment',
  503: 'A backing service is unavailable; retry with backoff',
};

class SchemaCollector {
  readonly components: Record<string, JsonSchema> = {};

  convert(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const generated = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' });
    // Shared schemas (those with a meta id) come out as local $defs; they live in components here.
    const json = JSON.parse(JSON.stringify(generated).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema;
    const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
    for (const [id, def] of Object.entries(defs)) this.components[id] = def;
    delete json.$defs;
    delete json.$schema;
    const id = (z.globalRegistry.get(schema) as { id?: string } | undefined)?.id;
    if (id) {
      // A schema with an id is itself a component; the operation refers to it.
      // zod either inlines it (then it is stored here) or already emitted it as a $def above.
      delete json.id;
      if (json.$ref === undefined) this.components[id] = json;
      return { $ref: COMPONENT_REF(id) };
    }
    return json;
  }
}

const openApiPath = (koaPath: string) => koaPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function parameters(route: RouteDescription, collector: SchemaCollector): object[] {
  const out: object[] = [];
  for (const [location, object] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    if (!object) continue;
    for (const [name, field] of Object.entries(object.shape as Record<string, z.ZodType>)) {
      const schema = collector.convert(field, 'input');
      const required = location === 'path' || !field.safeParse(undefined).success;
      out.push({
        name,
        in: location,
        required,
        schema,
        ...(schema.type === 'array' ? { style: 'form', explode: true } : {}),
      });
    }
  }
  if (route.idempotencyKey) {
    out.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: 'Retrying with the same key (1 to 255 printable ASCII characters) returns the first answer instead of a second memory',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    });
  }
  return out;
}

function operation(route: RouteDescription, collector: SchemaCollector): object {
  const errorStatuses = new Set(route.errors);
  // Behind authentication every request also has the server-side deadline (503 request_timeout).
  if (route.auth === 'bearer') [401, 429, 500, 503].forEach((status) => errorStatuses.add(status));
  if (route.body) [400, 413, 415].forEach((status) => errorStatuses.add(status));
  const responses: Record<string, object> = {
    [String(route.success.status)]: {
      description: route.success.description,
      ...(route.success.headers
        ? {
            headers: Object.fromEntries(
              Object.entries(route.success.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }]),
            ),
          }
        : {}),
      ...(route.success.schema
        ? { content: { 'application/json': { schema: collector.convert(route.success.schema, 'output') } } }
        : route.success.contentType
          ? { content: { [route.success.contentType]: { schema: { type: 'string', format: 'binary' } } } }
          : {}),
    },
  };
  for (const other of route.alsoSuccess ?? []) {
    responses[String(other.status)] = {
      description: other.description,
      content: { 'application/json': { schema: collector.convert(other.schema, 'output') } },
    };
  }
  for (const status of [...errorStatuses].sort()) responses[String(status)] = { $ref: `#/components/responses/Error${status}` };
  const requestBody = route.body
    ? { required: true, content: { 'application/json': { schema: collector.convert(route.body, 'input') } } }
    : route.rawBody
      ? { required: true, content: { [route.rawBody]: { schema: { type: 'string', format: 'binary' } } } }
      : undefined;
  const params = parameters(route, collector);
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    security: route.auth === 'bearer' ? [{ apiKey: [] }] : [],
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

export interface OpenApiOptions {
  limits: Limits;
  version: string;
}

export function buildOpenApiDocument({ limits, version }: OpenApiOptions): Record<string, unknown> {
  const collector = new SchemaCollector();
  const paths: Record<string, Record<string, object>> = {};
  for (const route of describeRoutes(limits)) {
    const key = openApiPath(route.path);
    paths[key] = { ...paths[key], [route.method]: operation(route, collector) };
  }
  const errorRef = collector.convert(ErrorBody, 'output');
  const usedStatuses = new Set(Object.values(ERROR_CODES).concat(Object.keys(STATUS_TEXT).map(Number)));
  const responses = Object.fromEntries(
    [...usedStatuses].sort().map((status) => [
      `Error${status}`,
      {
        description: `${STATUS_TEXT[status] ?? 'Error'}. Codes: ${Object.entries(ERROR_CODES)
          .filter(([, codeStatus]) => codeStatus === status)
          .map(([code]) => code)
          .join(', ')}`,
        ...(status === 429 || status === 503
          ? { headers: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } } }
          : {}),
        content: { 'application/json': { schema: errorRef } },
      },
    ]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Engram memory service',
      version,
      description:
        'Memories, collections, search and presigned uploads. Generated from the zod schemas the routes validate with ' +
        '(npm run openapi). Workflow reads, the WebSocket event endpoint and the signing keys are not part of this export; ' +
        'event frames are described by the JSON Schema at /v1/events.schema.json.',
    },
    servers: [{ url: '/' }],
    tags: [
      { name: 'memories' },
      { name: 'search' },
      { name: 'device-memory', description: 'Portable signed graph snapshots (docs/device-memory.md)' },
      { name: 'collections' },
      { name: 'uploads' },
      { name: 'events', description: 'Ticket minting for the live-event WebSocket' },
      { name: 'webhooks', description: 'Signed webhook subscriptions fed by the durable event log (docs/webhooks.md)' },
      { name: 'operations' },
    ],
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' } },
      schemas: collector.components,
      responses,
    },
    'x-error-codes': ERROR_CODES,
  };
}

/**
 * Admin CLI: `npm run admin -- <command>`. Talks to MongoDB directly (MONGODB_URI, or the
 * running dev stack recorded in data/dev-stack.json). Run with `help` for the commands.
 * `signing-key` commands work on the event-signing keyset file only and need no MongoDB.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type Config, loadConfig } from '../config/index.js';
import { SIGNING_ALGORITHMS, type SigningAlgorithm } from '../core/event-signature.js';
import { DEFAULT_RETENTION_MS, KeysetError, readKeysetFile, rotateKeyset } from '../core/signing-keyset.js';
import { AdminError, createAdminService } from '../services/admin.js';
import { copyDatabase, StoreCopyError } from '../store/copy.js';
import { openStore } from '../store/index.js';

const USAGE = `Usage: npm run admin -- <command> [options]   (add --json for machine-readable output)

  tenant create <name>                      create a tenant
  tenant list                               list tenants
  key create --tenant <id|name> [--name N]  create an API key (printed once; only its hash is stored)
  key list [--tenant <id|name>]             list keys (prefix, status; never the key)
  key revoke <key-id>                       revoke a key (effective within 5 s)
  collection create --tenant <id|name> <name>
  collection list --tenant <id|name>
  bootstrap --tenant <name> --collection <name> [--name N]
                                            tenant (reused) + new key + collection (reused)
  signing-key list                          list event-signing keys (kid, alg, status; never private parts)
  signing-key rotate [--alg Ed25519|ES256] [--retention-days N]
                                            new active key; the previous one is retired (still verifies);
                                            keys retired more than N days ago (default 30) are dropped
  store copy --to <mongodb-uri> [--to-db <name>] [--replace]
                                            copy the whole database (every collection, its indexes and
                                            documents, in batches) to another MongoDB, e.g. from the
                                            embedded store to a real one; stop the service first. A
                                            non-empty target is refused unless --replace (drops it first)

Connects to MONGODB_URI, or to the dev stack started by \`npm run dev\`. signing-key commands need no
database: they use the keyset file EVENT_SIGNING_KEYSET_PATH (default <DATA_DIR>/event-signing-keyset.json).`;

function mongoUri(dataDir: string): string {
  if (process.env.MONGODB_URI) return process.env.MONGODB_URI;
  try {
    const stack = JSON.parse(readFileSync(path.join(dataDir, 'dev-stack.json'), 'utf8')) as { mongoUri?: string };
    if (stack.mongoUri) return stack.mongoUri;
  } catch {
    // fall through
  }
  throw new AdminError('MONGODB_URI is not set and no running dev stack was found (start one with `npm run dev`)');
}

function signingKeysetPath(config: Config): string {
  // Empty means unset, as for every other setting.
  return process.env.EVENT_SIGNING_KEYSET_PATH || path.join(config.DATA_DIR, 'event-signing-keyset.json');
}

interface SigningKeyOptions {
  json: boolean;
  alg: string | undefined;
  retentionDays: string | undefined;
}

/** Keyset problems (bad file, held lock) are the operator's to fix: report them like other admin errors. */
function asAdminError(error: unknown): never {
  throw error instanceof KeysetError ? new AdminError(error.message) : error;
}

/** `signing-key list|rotate`: the keyset file only, no MongoDB. Prints kids and metadata, never key material. */
async function signingKeyCommand(action: string | undefined, config: Config, options: SigningKeyOptions): Promise<void> {
  const file = signingKeysetPath(config);
  const print = (value: unknown, human: string) => console.log(options.json ? JSON.stringify(value, null, 2) : human);
  const describe = (key: { kid: string; alg: string; status: string; created_at: string; retired_at?: string }) => ({
    kid: key.kid,
    alg: key.alg,
    status: key.status,
    created_at: key.created_at,
    retired_at: key.retired_at ?? null,
  });
  switch (action) {
    case 'list': {
      const keyset = await readKeysetFile(file).catch(asAdminError);
      if (!keyset) {
        throw new AdminError(`no signing keyset at ${file} (the service creates one on first start; or run \`signing-key rotate\`)`);
      }
      const keys = keyset.keys.map(describe);
      print(
        { path: file, keys },
        [
          `keyset ${file}`,
          ...keys.map((k) => `${k.kid}  ${k.alg}  ${k.status}  created ${k.created_at}${k.retired_at ? `  retired ${k.retired_at}` : ''}`),
        ].join('\n'),
      );
      return;
    }
    case 'rotate': {
      if (options.alg !== undefined && !SIGNING_ALGORITHMS.includes(options.alg as SigningAlgorithm)) {
        throw new AdminError(`--alg must be one of ${SIGNING_ALGORITHMS.join(', ')}`);
      }
      let retentionMs = DEFAULT_RETENTION_MS;
      if (options.retentionDays !== undefined) {
        const days = Number(options.retentionDays);
        if (!/^\d+(\.\d+)?$/.test(options.retentionDays) || !Number.isFinite(days)) {
          throw new AdminError('--retention-days must be a non-negative number');
        }
        retentionMs = days * 24 * 60 * 60 * 1000;
      }
      const result = await rotateKeyset(file, { alg: options.alg as SigningAlgorithm | undefined, retentionMs }).catch(asAdminError);
      print(
        {
          path: file,
          active: describe(result.added),
          retired: result.retired ? describe(result.retired) : null,
          dropped: result.dropped.map(describe),
        },
        [
          `new active key ${result.added.kid} (${result.added.alg}) in ${file}`,
          result.retired ? `retired ${result.retired.kid} (still served for verification)` : 'no previous key: keyset created',
          ...result.dropped.map((k) => `dropped ${k.kid} (retired ${k.retired_at ?? k.created_at})`),
          'Processes that loaded the keyset earlier keep signing with the previous key until they reload it.',
        ].join('\n'),
      );
      return;
    }
    default:
      throw new AdminError(`unknown command "signing-key ${action ?? ''}"\n\n${USAGE}`);
  }
}

interface StoreCopyCliOptions {
  to: string | undefined;
  toDb: string | undefined;
  replace: boolean;
  json: boolean;
}

/** `store copy`: the whole database to another MongoDB (README: moving to real MongoDB). */
async function storeCommand(action: string | undefined, config: Config, options: StoreCopyCliOptions): Promise<void> {
  if (action !== 'copy') throw new AdminError(`unknown command "store ${action ?? ''}"\n\n${USAGE}`);
  if (!options.to) throw new AdminError(`missing --to <mongodb-uri>\n\n${USAGE}`);
  if (!/^mongodb(\+srv)?:\/\//.test(options.to)) throw new AdminError('--to must be a mongodb:// or mongodb+srv:// URI');
  const sourceUri = mongoUri(config.DATA_DIR);
  const targetDb = options.toDb ?? config.MONGODB_DB;
  const started = Date.now();
  let lastReport = 0;
  const result = await copyDatabase({
    sourceUri,
    sourceDb: config.MONGODB_DB,
    targetUri: options.to,
    targetDb,
    replace: options.replace,
    onProgress: (collection, copied) => {
      if (options.json || Date.now() - lastReport < 2000) return;
      lastReport = Date.now();
      process.stderr.write(`  ${collection}: ${copied} documents…\n`);
    },
  }).catch((error: unknown) => {
    throw error instanceof StoreCopyError ? new AdminError(error.message) : error;
  });
  const changed = result.collections.filter((c) => c.sourceDocumentsAfter !== c.documents);
  const seconds = (Date.now() - started) / 1000;
  console.log(
    options.json
      ? JSON.stringify({ target_db: targetDb, ...result, seconds, source_changed: changed.map((c) => c.name) }, null, 2)
      : [
          ...result.collections.map((c) => `${c.name}: ${c.documents} documents, ${c.indexes.length} indexes`),
          `copied ${result.documents} documents in ${result.collections.length} collections to database ${targetDb} in ${seconds.toFixed(1)} s` +
            (result.replaced ? ' (its previous contents were dropped)' : ''),
          ...(changed.length > 0
            ? [
                `warning: the source changed while copying (${changed.map((c) => c.name).join(', ')}): stop the service and copy again with --replace`,
              ]
            : []),
        ].join('\n'),
  );
  if (changed.length > 0) process.exitCode = 3;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      tenant: { type: 'string' },
      name: { type: 'string' },
      collection: { type: 'string' },
      alg: { type: 'string' },
      'retention-days': { type: 'string' },
      to: { type: 'string' },
      'to-db': { type: 'string' },
      replace: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const [resource, action, arg] = positionals;
  if (values.help || !resource || resource === 'help') {
    console.log(USAGE);
    return;
  }
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  if (resource === 'signing-key') {
    await signingKeyCommand(action, config, { json: values.json, alg: values.alg, retentionDays: values['retention-days'] });
    return;
  }
  if (resource === 'store') {
    await storeCommand(action, config, { to: values.to, toDb: values['to-db'], replace: values.replace, json: values.json });
    return;
  }
  const store = await openStore(config, mongoUri(config.DATA_DIR));
  const admin = createAdminService(store);
  const print = (value: unknown, human: string) => console.log(values.json ? JSON.stringify(value, null, 2) : human);
  const need = (value: string | undefined, what: string): string => {
    if (!value) throw new AdminError(`missing ${what}\n\n${USAGE}`);
    return value;
  };
  try {
    const command = `${resource} ${action ?? ''}`.trim();
    switch (command) {
      case 'tenant create': {
        const tenant = await admin.createTenant(need(arg, '<name>'));
        print({ id: tenant.id, name: tenant.name }, `tenant ${tenant.id} ${tenant.name}`);
        break;
      }
      case 'tenant list': {
        const tenants = await admin.listTenants();
        print(
          tenants.map((t) => ({ id: t.id, name: t.name, created_at: t.created_at })),
          tenants.map((t) => `${t.id}  ${t.name}`).join('\n'),
        );
        break;
      }
      case 'key create': {
        const { key, record } = await admin.createKey(need(values.tenant, '--tenant'), values.name ?? 'cli');
        print(
          { id: record.id, tenant_id: record.tenant_id, api_key: key },
          `key ${record.id} for tenant ${record.tenant_id}\n${key}\n(store it now: it is not shown again)`,
        );
        break;
      }
      case 'key list': {
        const keys = await admin.listKeys(values.tenant);
        print(
          keys.map((k) => ({
            id: k.id,
            tenant_id: k.tenant_id,
            name: k.name,
            prefix: k.prefix,
            revoked_at: k.revoked_at,
            created_at: k.created_at,
          })),
          keys.map((k) => `${k.id}  ${k.prefix}…  ${k.name}  tenant=${k.tenant_id}  ${k.revoked_at ? 'REVOKED' : 'active'}`).join('\n'),
        );
        break;
      }
      case 'key revoke': {
        await admin.revokeKey(need(arg, '<key-id>'));
        print({ id: arg, revoked: true }, `revoked ${arg}`);
        break;
      }
      case 'collection create': {
        const collection = await admin.createCollection(need(values.tenant, '--tenant'), need(arg, '<name>'));
        print(
          { id: collection.id, name: collection.name, tenant_id: collection.tenant_id },
          `collection ${collection.id} ${collection.name}`,
        );
        break;
      }
      case 'collection list': {
        const items = await admin.listCollections(need(values.tenant, '--tenant'));
        print(
          items.map((c) => ({ id: c.id, name: c.name })),
          items.map((c) => `${c.id}  ${c.name}`).join('\n'),
        );
        break;
      }
      case 'bootstrap': {
        const result = await admin.bootstrap(
          need(values.tenant, '--tenant'),
          need(values.collection, '--collection'),
          values.name ?? 'bootstrap',
        );
        print(
          { tenant_id: result.tenant.id, api_key: result.apiKey, key_id: result.keyId, collection_id: result.collection.id },
          `tenant ${result.tenant.id}\napi key ${result.apiKey}\ncollection ${result.collection.id} ${result.collection.name}`,
        );
        break;
      }
      default:
        throw new AdminError(`unknown command "${command}"\n\n${USAGE}`);
    }
  } finally {
    await store.close();
  }
}

main().catch((error: unknown) => {
  if (error instanceof AdminError || (error instanceof Error && error.name === 'AppError')) {
    console.error(`error: ${error.message}`);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
});

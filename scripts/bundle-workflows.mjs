// Prebuilds the deterministic workflow bundle once at build time, so worker start-up skips it.
import { bundleWorkflowCode } from '@temporalio/worker';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { code } = await bundleWorkflowCode({
  workflowsPath: path.join(root, 'dist', 'workflows', 'index.js'),
  logger: { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} },
});
await writeFile(path.join(root, 'dist', 'workflow-bundle.js'), code);

/**
 * Entry of the API's request-body threads: serves only the JSON tasks of json-tasks.ts, so a
 * thread started with the process does not load the structure extractor it never runs.
 */
import { serveTasks } from '../core/worker-pool.js';
import { jsonTasks } from './json-tasks.js';

serveTasks(jsonTasks);

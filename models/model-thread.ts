/** Entry of an embedder's own model thread (EmbedderOptions.ownThread): serves the tasks of model-tasks.ts. */
import { serveTasks } from '../core/worker-pool.js';
import { modelTasks } from './model-tasks.js';

serveTasks(modelTasks);

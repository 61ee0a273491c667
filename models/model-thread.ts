/** Entry of a process's model thread (models/model-thread-client.ts): serves the tasks of model-tasks.ts. */
import { serveTasks } from '../core/worker-pool.js';
import { modelTasks } from './model-tasks.js';

serveTasks(modelTasks);

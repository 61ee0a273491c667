/** Entry of the API's CPU worker threads: serves the tasks of cpu-tasks.ts. */
import { serveTasks } from '../core/worker-pool.js';
import { cpuTasks } from './cpu-tasks.js';

serveTasks(cpuTasks);

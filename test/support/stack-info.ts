export interface StackInfo {
  apiUrl: string;
  /** Environment the service processes were started with (to restart a worker). */
  serviceEnv: Record<string, string>;
  workerPid: number;
  logDir: string;
  stackFile: string;
  /** GET /metrics of the first worker process (WORKER_METRICS_PORT). */
  workerMetricsUrl?: string;
}

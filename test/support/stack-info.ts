export interface StackInfo {
  apiUrl: string;
  /** Environment the service processes were started with (to restart a worker). */
  serviceEnv: Record<string, string>;
  workerPid: number;
  /** The test runner (test/run.ts): a worker a suite starts lives as long as it, not as the suite's own process. */
  runnerPid: number;
  logDir: string;
  stackFile: string;
  /** GET /metrics of the first worker process (WORKER_METRICS_PORT). */
  workerMetricsUrl?: string;
}

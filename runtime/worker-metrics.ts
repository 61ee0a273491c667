/**
 * A worker-only process has no API server, so with WORKER_METRICS_PORT set it serves GET /metrics
 * on a listener of its own, under the same access rule as the API's (token or loopback).
 */
import http from 'node:http';
import type { Config } from '../config/index.js';
import type { Logger } from '../core/logger.js';
import { metricsAccessAllowed, metricsRegistry, scrapeMetrics } from '../core/metrics.js';

export async function serveWorkerMetrics(config: Config, port: number, logger: Logger): Promise<() => Promise<void>> {
  const server = http.createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404).end();
      return;
    }
    if (!metricsAccessAllowed(config.METRICS_TOKEN, request.headers.authorization ?? '', request.socket.remoteAddress)) {
      response.writeHead(403).end();
      return;
    }
    scrapeMetrics().then(
      (text) => response.writeHead(200, { 'Content-Type': metricsRegistry.contentType }).end(text),
      (error: unknown) => {
        logger.warn({ err: error }, 'metrics scrape failed');
        response.writeHead(500).end();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, config.HOST, () => resolve());
  });
  logger.info({ port, host: config.HOST }, 'worker metrics listening');
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A raw WebSocket test client: frames collected in order, with waiting helpers. */
import WebSocket from 'ws';
import type { Api } from './client.js';
import { checkFrame } from './events-schema.js';

export interface Frame {
  action: string;
  seq?: number;
  reason?: string;
  [key: string]: unknown;
}

export class RawSocket {
  readonly frames: Frame[] = [];
  private waiters: (() => void)[] = [];
  closed: { code: number; reason: string } | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data)) as Frame;
      // Every frame a suite receives is a check of the events schema against real traffic; the
      // test runner reports the throw as a failure of the running test.
      const mismatch = checkFrame(frame);
      if (mismatch) throw new Error(mismatch);
      this.frames.push(frame);
      this.notify();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) };
      this.notify();
    });
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  static async connect(url: string): Promise<RawSocket> {
    const ws = new WebSocket(url);
    // Listening from the start: a frame can arrive in the same read as the upgrade response.
    const socket = new RawSocket(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (part: Buffer) => (body += String(part)));
        response.on('end', () =>
          reject(Object.assign(new Error(`upgrade refused: ${response.statusCode} ${body}`), { status: response.statusCode, body })),
        );
      });
      ws.once('error', reject);
    });
    return socket;
  }

  static async open(api: Api, query = ''): Promise<RawSocket> {
    return RawSocket.connect(`${await wsUrl(api)}${query}`);
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Resolves with the first frame (from `from` on) that matches. */
  async next(match: (frame: Frame) => boolean, timeoutMs = 15_000, from = 0): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.slice(from).find(match);
      if (found) return found;
      if (this.closed) throw new Error(`socket closed (${this.closed.code} ${this.closed.reason}) while waiting`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching frame in ${timeoutMs} ms; last frames: ${JSON.stringify(this.frames.slice(-3))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 1000));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  events(): Frame[] {
    return this.frames.filter((frame) => frame.action === 'event');
  }

  async waitForEvents(count: number, timeoutMs = 30_000): Promise<Frame[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.events().length < count) {
      if (Date.now() > deadline) throw new Error(`only ${this.events().length} of ${count} events in ${timeoutMs} ms`);
      if (this.closed) throw new Error(`socket closed (${this.closed.code} ${this.closed.reason})`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return this.events();
  }

  close(): void {
    this.ws.close();
  }
}

export async function wsUrl(api: Api): Promise<string> {
  const response = await api.post('/v1/users/ws-ticket');
  if (response.status !== 201) throw new Error(`ticket: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.results.ws_url as string;
}

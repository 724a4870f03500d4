import { Agent, request } from 'node:http';

const ANSWER_MS = 30_000;

/** Keep-alive POSTs to `/hook` over a Unix socket, as many connections as `connections`. */
export class SocketClient {
  private readonly agent: Agent;

  constructor(
    private readonly socketPath: string,
    connections: number,
  ) {
    // fifo: every kept-alive connection is reused in turn, so none sits idle into the server's keep-alive
    // timeout (5 s) and meets its close mid-request (a reset seen once in 60,000 paced hooks with lifo)
    this.agent = new Agent({ keepAlive: true, maxSockets: connections, scheduling: 'fifo' });
  }

  /** POST one body; resolves with the status (rejects when the connection fails). */
  post(body: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          socketPath: this.socketPath,
          path: '/hook',
          method: 'POST',
          agent: this.agent,
          headers: { host: 'localhost', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', reject);
        },
      );
      // a benchmark must never hang a CI run: an answer that does not come is a failure
      req.setTimeout(ANSWER_MS, () => req.destroy(new Error(`POST /hook not answered within ${ANSWER_MS} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  /** POST `sessions` (each one's hooks in order, one at a time) on up to `lanes` at once; answers that were not 200 throw. */
  /** 503 answers retried (see drive) */
  retried503 = 0;

  async drive(sessions: readonly (readonly string[])[], lanes: number): Promise<number> {
    let next = 0;
    let posted = 0;
    await Promise.all(
      Array.from({ length: Math.min(lanes, sessions.length) }, async () => {
        for (let s = next++; s < sessions.length; s = next++) {
          for (const body of sessions[s]!) {
            // 503 is the daemon's "not now" (a durable sink refusing, e.g. while a restarted daemon drains its
            // spool): the shim spools and retries; so does this client, within a deadline
            let status = await this.post(body);
            for (const deadline = Date.now() + 5_000; status === 503 && Date.now() < deadline; status = await this.post(body)) {
              this.retried503++;
              await new Promise((r) => setTimeout(r, 10));
            }
            if (status !== 200) throw new Error(`POST /hook answered ${status}`);
            posted++;
          }
        }
      }),
    );
    return posted;
  }

  close(): void {
    this.agent.destroy();
  }
}

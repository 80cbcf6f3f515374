/**
 * The transport of the reads: GET through `node:http(s)` on kept-alive connections. Waiting follow-ups are read every
 * 5 to 60 s, so a worker makes a few dozen GETs a second in small groups; on kept-alive connections a read costs the
 * worker less than half the CPU it costs through `fetch` (docs/BENCHMARKS.md, "Experiments behind the defaults").
 *
 * Sends stay on `fetch` (http-client.ts): they are a hundred an hour per project at most, and what their failures
 * mean (taken or not) is recorded in tests and replay histories. A GET may be repeated, so this transport also repeats
 * one whose kept-alive connection turned out closed before any answer came: the server may close an idle connection
 * just as a request is written on it.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

/** What a GET answered; a 3xx is an answer like any other (a redirect is never followed: it would carry the key). */
export interface GetAnswer {
  status: number;
  retryAfter: string | null;
  text: string;
}

/**
 * How long a connection may stay unused before it is closed here. Under the 5 s that Node's own servers keep one
 * (common behind APIs too), so a connection is rarely closed by the server while a request is being written on it.
 */
const IDLE_CONNECTION_MS = 4_000;

type Attempt = { answer: GetAnswer } | { staleConnection: unknown };

export class KeepAliveGet {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  /** `lookup`: the address guard's (address-guard.ts), so every new connection's address is checked. */
  constructor(lookup?: LookupFunction) {
    // Most recently used first, so a few connections stay warm rather than many half-idle ones.
    const options = {
      keepAlive: true,
      scheduling: 'lifo' as const,
      timeout: IDLE_CONNECTION_MS,
      ...(lookup ? { lookup } : {}),
    };
    this.httpAgent = new http.Agent(options);
    this.httpsAgent = new https.Agent(options);
  }

  /** GETs `url`; rejects with Node's own error (its `code`: ECONNREFUSED, ECONNRESET, …) or the signal's reason. */
  async get(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<GetAnswer> {
    const first = await this.attempt(new URL(url), headers, signal);
    if ('answer' in first) return first.answer;
    if (signal.aborted) throw first.staleConnection;
    const second = await this.attempt(new URL(url), headers, signal);
    if ('answer' in second) return second.answer;
    throw second.staleConnection;
  }

  private attempt(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<Attempt> {
    return new Promise((resolve, reject) => {
      const secure = url.protocol === 'https:';
      const options = { method: 'GET', headers, signal, agent: secure ? this.httpsAgent : this.httpAgent };
      let answered = false;
      const request = (secure ? https : http).request(url, options, (response) => {
        answered = true;
        response.setEncoding('utf8');
        let text = '';
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () =>
          resolve({
            answer: { status: response.statusCode ?? 0, retryAfter: headerOf(response.headers['retry-after']), text },
          }),
        );
        response.on('error', reject);
        response.on('close', () => {
          if (!response.complete)
            reject(
              Object.assign(new Error('the connection closed before the whole answer came'), { code: 'ECONNRESET' }),
            );
        });
      });
      request.on('error', (error) => {
        // Nothing came back on a connection used before: it was closed under us, and the GET can go out again.
        if (!answered && request.reusedSocket && (error as NodeJS.ErrnoException).code === 'ECONNRESET')
          resolve({ staleConnection: error });
        else reject(error);
      });
      request.end();
    });
  }
}

function headerOf(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

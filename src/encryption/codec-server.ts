/**
 * A codec server (Temporal's remote codec protocol: POST /encode and /decode with `{ payloads: [...] }` in proto JSON),
 * so the Web UI and `temporal workflow show --codec-endpoint` show encrypted payloads in clear to those who may see
 * them. The keys stay in this process; the browser only ever sends payloads and gets payloads back.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isLoopbackHost } from '../loopback';
import { timingSafeEqual } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { z } from 'zod';

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** Default 8888 (0: a free port). */
  port?: number;
  /** Default 127.0.0.1. Any other address needs `token` or `authorize`: the server would decrypt for anyone who asks. */
  host?: string;
  /** Origins a browser may call from (the Web UI's, e.g. http://localhost:8233 or https://cloud.temporal.io). */
  allowedOrigins?: readonly string[];
  /** A shared secret every request must bear (`Authorization: Bearer <token>`; the CLI's `--codec-auth`). */
  token?: string;
  /**
   * Your own check instead of `token`, e.g. to verify the access token the Web UI passes ("pass access token") with
   * your identity provider. Resolves true to serve the request.
   */
  authorize?: (request: { authorization: string | undefined; namespace: string | undefined }) => Promise<boolean>;
}

export interface CodecServer {
  /** `http://host:port`: the Web UI's codec endpoint. */
  readonly url: string;
  close(): Promise<void>;
}

/** The remote codec protocol's body: payloads in proto JSON (bytes as base64). */
const PayloadsBodySchema = z.object({
  payloads: z.array(
    z.object({
      metadata: z.record(z.string(), z.string()).optional(),
      data: z.string().optional(),
    }),
  ),
});

/** Bodies above this are refused: a decode carries a page of history's payloads, each at most Temporal's 2 MB. */
export const MAX_CODEC_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Payloads per request, at most. The Web UI and the Temporal CLI send one event's field (a handful) at a time; without
 * a bound, 9 MB of empty payloads (3,000,000) parsed into objects took this process to 1.5 GB.
 */
export const MAX_CODEC_PAYLOADS = 10_000;

/** Requests whose bodies are read and coded at once; the others wait their turn (a browser sends many at once). */
const MAX_CONCURRENT_REQUESTS = 4;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Starts the codec server; refuses to serve a non-loopback address without a token or an authorize check. */
export async function startCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host) && options.token === undefined && options.authorize === undefined) {
    throw new Error(
      `a codec server on ${host} would decrypt payloads for anyone who can reach it: give it a token ` +
        '(AGENT_CODEC_SERVER_TOKEN) or serve it on 127.0.0.1 behind your own authenticating proxy',
    );
  }
  const authorize = options.authorize ?? tokenCheck(options.token);
  const origins = new Set(options.allowedOrigins ?? []);
  // Without a token the only guard is that the caller is on this machine; a page whose name a DNS server rebinds to
  // 127.0.0.1 is too, so the request must also be addressed to this machine by a loopback name.
  const checkHost = options.token === undefined && options.authorize === undefined;
  const turns = new Turns(MAX_CONCURRENT_REQUESTS);
  let port = 0;
  const server = createServer((request, response) => {
    const guard = { origins, authorize, hostPort: checkHost ? port : undefined, turns };
    serve(request, response, options.codec, guard).catch((error: unknown) => {
      const status = error instanceof HttpError ? error.status : 500;
      // The message never holds payload bytes or keys: only what was wrong with the request.
      const message = error instanceof Error ? error.message : 'internal error';
      if (!response.headersSent) response.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
      response.end(message);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8888, host, () => resolve());
  });
  ({ port } = server.address() as AddressInfo);
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => closeServer(server),
  };
}

function tokenCheck(token: string | undefined): NonNullable<CodecServerOptions['authorize']> {
  if (token === undefined) return async () => true;
  const expected = Buffer.from(`Bearer ${token}`);
  return async ({ authorization }) => {
    const given = Buffer.from(authorization ?? '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
}

/** What a request must pass before its body is read. */
interface Guard {
  origins: ReadonlySet<string>;
  authorize: NonNullable<CodecServerOptions['authorize']>;
  /** The port a token-less server listens on: its requests' Host must name it by a loopback name. */
  hostPort: number | undefined;
  turns: Turns;
}

/** Whether a Host header names this machine by a loopback name and the server's own port. */
function isLoopbackHostHeader(hostHeader: string | undefined, port: number): boolean {
  if (hostHeader === undefined) return false;
  let url: URL;
  try {
    url = new URL(`http://${hostHeader}`);
  } catch {
    return false;
  }
  return url.host === hostHeader.toLowerCase() && isLoopbackHost(url.hostname) && url.port === String(port);
}

async function serve(
  request: IncomingMessage,
  response: ServerResponse,
  codec: PayloadCodec,
  { origins, authorize, hostPort, turns }: Guard,
): Promise<void> {
  if (hostPort !== undefined && !isLoopbackHostHeader(request.headers.host, hostPort)) {
    throw new HttpError(
      421,
      `this codec server has no token, so it answers only requests addressed to 127.0.0.1:${hostPort}, ` +
        `localhost:${hostPort} or [::1]:${hostPort}; to serve another name, set AGENT_CODEC_SERVER_TOKEN`,
    );
  }
  const origin = request.headers.origin;
  // A browser names the page that calls; only the Web UI's may (a page elsewhere must not use the keys, CORS or not).
  if (origin !== undefined && !origins.has(origin)) {
    throw new HttpError(403, `calls from the origin ${origin} are refused: name the Web UI's origin with --web-origin`);
  }
  if (origin !== undefined) {
    response.setHeader('Access-Control-Allow-Origin', origin);
    response.setHeader('Access-Control-Allow-Credentials', 'true');
    response.setHeader('Vary', 'Origin');
  }
  if (request.method === 'OPTIONS') {
    response.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    response.setHeader('Access-Control-Allow-Headers', 'Content-Type, X-Namespace, Authorization');
    response.writeHead(origin !== undefined ? 204 : 403).end();
    return;
  }
  const path = new URL(request.url ?? '/', 'http://codec').pathname.replace(/\/+$/, '');
  const operation = path.endsWith('/decode') ? 'decode' : path.endsWith('/encode') ? 'encode' : undefined;
  if (request.method !== 'POST' || operation === undefined) {
    throw new HttpError(404, 'this codec server answers POST /encode and POST /decode');
  }
  const namespace = request.headers['x-namespace'];
  const allowed = await authorize({
    authorization: request.headers.authorization,
    namespace: typeof namespace === 'string' ? namespace : undefined,
  });
  if (!allowed) throw new HttpError(401, 'not authorized: send Authorization: Bearer <the codec server token>');
  await turns.take();
  try {
    await code(request, response, codec, operation);
  } finally {
    turns.give();
  }
}

async function code(
  request: IncomingMessage,
  response: ServerResponse,
  codec: PayloadCodec,
  operation: 'encode' | 'decode',
): Promise<void> {
  const body = PayloadsBodySchema.safeParse(await readJson(request));
  if (!body.success) throw new HttpError(400, 'the body must be {"payloads": [{"metadata": {...}, "data": "..."}]}');
  if (body.data.payloads.length > MAX_CODEC_PAYLOADS) throw tooManyPayloads();
  const payloads = temporal.api.common.v1.Payloads.fromObject(body.data).payloads as Payload[];
  let result: Payload[];
  try {
    result = await codec[operation](payloads);
  } catch (error) {
    throw new HttpError(422, error instanceof Error ? error.message : `the payloads could not be ${operation}d`);
  }
  const json = temporal.api.common.v1.Payloads.toObject(temporal.api.common.v1.Payloads.create({ payloads: result }), {
    bytes: String,
  });
  response
    .writeHead(200, { 'Content-Type': 'application/json' })
    .end(JSON.stringify({ payloads: json.payloads ?? [] }));
}

function tooManyPayloads(): HttpError {
  return new HttpError(
    413,
    `a request may carry at most ${MAX_CODEC_PAYLOADS} payloads: send them in several requests`,
  );
}

/** Every payload is a JSON object, and so is its metadata: more braces than that bound, too many payloads. */
const OPEN_BRACE = 0x7b;

async function readJson(request: IncomingMessage): Promise<unknown> {
  const declared = Number(request.headers['content-length'] ?? 0);
  const tooLarge = () =>
    new HttpError(
      413,
      `a request body may be at most ${MAX_CODEC_BODY_BYTES} bytes: send the payloads in several requests`,
    );
  if (declared > MAX_CODEC_BODY_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  let objects = 0;
  for await (const chunk of request) {
    const bytes = chunk as Buffer;
    size += bytes.length;
    if (size > MAX_CODEC_BODY_BYTES) throw tooLarge();
    if (objects > 2 * MAX_CODEC_PAYLOADS + 1) continue;
    // Counted before parsing: it is the parsed objects, not the bytes, that cost memory.
    for (let at = bytes.indexOf(OPEN_BRACE); at >= 0; at = bytes.indexOf(OPEN_BRACE, at + 1)) objects += 1;
    // Too many: the rest is read and dropped (at most the byte bound), so the caller gets the 413, not a reset.
    if (objects > 2 * MAX_CODEC_PAYLOADS + 1) chunks.length = 0;
    else chunks.push(bytes);
  }
  if (objects > 2 * MAX_CODEC_PAYLOADS + 1) throw tooManyPayloads();
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'the body is not JSON');
  }
}

/** At most `limit` holders at once; the others wait in order. */
class Turns {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(limit: number) {
    this.free = limit;
  }

  async take(): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free += 1;
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}

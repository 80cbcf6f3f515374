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
const MAX_BODY_BYTES = 16 * 1024 * 1024;

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
  const server = createServer((request, response) => {
    serve(request, response, options.codec, origins, authorize).catch((error: unknown) => {
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
  const { port } = server.address() as AddressInfo;
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

async function serve(
  request: IncomingMessage,
  response: ServerResponse,
  codec: PayloadCodec,
  origins: ReadonlySet<string>,
  authorize: NonNullable<CodecServerOptions['authorize']>,
): Promise<void> {
  const origin = request.headers.origin;
  if (origin !== undefined && origins.has(origin)) {
    response.setHeader('Access-Control-Allow-Origin', origin);
    response.setHeader('Access-Control-Allow-Credentials', 'true');
    response.setHeader('Vary', 'Origin');
  }
  if (request.method === 'OPTIONS') {
    response.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    response.setHeader('Access-Control-Allow-Headers', 'Content-Type, X-Namespace, Authorization');
    response.writeHead(origin !== undefined && origins.has(origin) ? 204 : 403).end();
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
  const body = PayloadsBodySchema.safeParse(await readJson(request));
  if (!body.success) throw new HttpError(400, 'the body must be {"payloads": [{"metadata": {...}, "data": "..."}]}');
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

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `the body is over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'the body is not JSON');
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}

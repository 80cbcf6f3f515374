/**
 * The reads' transport (keep-alive-get.ts) through the client, against raw loopback servers that do what real servers
 * and proxies sometimes do: close a kept-alive connection as a request is written on it, cut a body short, redirect.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { AgentApiClient } from '../../src/agent-api/http-client';
import { failureOf } from '../support/failures';

const API_KEY = 'mint_test_unit_key_0001';
const JOB = { projectId: 'p', jobId: 'j' };
const BODY = JSON.stringify({ id: 'j', status: 'active', prLink: null });
const ANSWER = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\nConnection: keep-alive\r\n\r\n${BODY}`;

function clientFor(baseUrl: string): AgentApiClient {
  return new AgentApiClient({ baseUrl, apiKey: API_KEY, requestTimeoutMs: 2_000 });
}

/**
 * A server that sees every request (by the connection it came on) and lets `respond` decide: write an answer, or
 * destroy the connection.
 */
async function rawServer(respond: (socket: Socket, connection: number, requestOnConnection: number) => void) {
  const seen: Array<{ connection: number; request: number }> = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: TcpServer = createTcpServer((socket) => {
    connections += 1;
    const connection = connections;
    let requests = 0;
    let buffered = '';
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.on('data', (data) => {
      buffered += data.toString('latin1');
      // A GET has no body: each blank line ends one request.
      while (buffered.includes('\r\n\r\n')) {
        buffered = buffered.slice(buffered.indexOf('\r\n\r\n') + 4);
        requests += 1;
        seen.push({ connection, request: requests });
        respond(socket, connection, requests);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the reads go over kept-alive connections', () => {
  test("one connection carries a worker's reads one after another", async () => {
    const server = await rawServer((socket) => socket.write(ANSWER));
    try {
      const client = clientFor(server.baseUrl);
      for (let i = 0; i < 5; i += 1) expect((await client.getAgentJob(JOB)).status).toBe('active');
      expect(server.seen.map((request) => request.connection)).toEqual([1, 1, 1, 1, 1]);
    } finally {
      await server.close();
    }
  });

  test('a kept-alive connection closed as the next GET goes out: the GET goes out again, once, on a new connection', async () => {
    // The first connection answers once, then closes as the second request arrives on it (an idle timeout racing it).
    const server = await rawServer((socket, connection, request) => {
      if (connection === 1 && request === 2) socket.destroy();
      else socket.write(ANSWER);
    });
    try {
      const client = clientFor(server.baseUrl);
      await client.getAgentJob(JOB);
      expect((await client.getAgentJob(JOB)).status).toBe('active');
      expect(server.seen).toEqual([
        { connection: 1, request: 1 },
        { connection: 1, request: 2 },
        { connection: 2, request: 1 },
      ]);
    } finally {
      await server.close();
    }
  });

  test('a new connection closed before any answer is a retryable network failure, not repeated here', async () => {
    const server = await rawServer((socket) => socket.destroy());
    try {
      const failure = await failureOf(clientFor(server.baseUrl).getAgentJob(JOB));
      expect(failure.type).toBe('AgentApiNetworkError');
      expect(failure.nonRetryable).toBe(false);
      expect(failure.message).toContain('ECONNRESET');
      expect(server.seen).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  test('a body cut short is a retryable network failure, not a job that breaks the contract', async () => {
    const server = await rawServer((socket) => {
      socket.write(
        `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(BODY) + 100}\r\n\r\n${BODY}`,
      );
      setImmediate(() => socket.destroy());
    });
    try {
      const failure = await failureOf(clientFor(server.baseUrl).getAgentJob(JOB));
      expect(failure.type).toBe('AgentApiNetworkError');
      expect(failure.nonRetryable).toBe(false);
      expect(server.seen).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  test('a redirect is not followed (it would carry the key elsewhere): the read fails with its status', async () => {
    let elsewhere = 0;
    const other: Server = createHttpServer((_request, response) => {
      elsewhere += 1;
      response.end(BODY);
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', () => resolve()));
    const location = `http://127.0.0.1:${(other.address() as AddressInfo).port}/stolen`;
    const server = await rawServer((socket) =>
      socket.write(`HTTP/1.1 302 Found\r\nLocation: ${location}\r\nContent-Length: 0\r\n\r\n`),
    );
    try {
      const failure = await failureOf(clientFor(server.baseUrl).getAgentJob(JOB));
      expect(failure.message).toContain('302');
      expect(failure.message).not.toContain(API_KEY);
      expect(elsewhere).toBe(0);
    } finally {
      await server.close();
      other.closeAllConnections();
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  test('Retry-After on a 429 reaches the failure', async () => {
    const error = JSON.stringify({ error: 'rate limited' });
    const server = await rawServer((socket) =>
      socket.write(
        `HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(error)}\r\n\r\n${error}`,
      ),
    );
    try {
      const failure = await failureOf(clientFor(server.baseUrl).getAgentJob(JOB));
      expect(failure.message).toContain('rate limited');
      expect(failure.details?.[0]).toMatchObject({ retryAfterMs: 7_000 });
    } finally {
      await server.close();
    }
  });

  test('over https a certificate nobody vouches for is refused before anything is sent', async () => {
    // A throwaway self-signed certificate, made for this test.
    const dir = mkdtempSync(join(tmpdir(), 'agent-followup-tls-'));
    let requests = 0;
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-days',
          '1',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
          '-subj',
          '/CN=127.0.0.1',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
        ],
        { stdio: 'ignore' },
      );
      const server = createHttpsServer(
        { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
        (_request, response) => {
          requests += 1;
          response.end(BODY);
        },
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
      try {
        const failure = await failureOf(
          clientFor(`https://127.0.0.1:${(server.address() as AddressInfo).port}`).getAgentJob(JOB),
        );
        expect(failure.type).toBe('AgentApiNetworkError');
        expect(failure.message).toContain('SELF_SIGNED_CERT');
        expect(requests).toBe(0);
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

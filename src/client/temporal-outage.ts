/**
 * Telling "Temporal is out of reach" apart from everything else a call can fail with. The SDK retries an unanswered
 * call for about a minute and then throws a gRPC status (UNAVAILABLE), or, under a deadline of ours, DEADLINE_EXCEEDED,
 * which alone looks the same as a worker that does not answer a query. Callers get one typed error that names the
 * address and namespace and says what to check, so a person is never sent to look at a worker that is fine.
 */
import { isGrpcCancelledError, isGrpcDeadlineError, isGrpcServiceError, type Client } from '@temporalio/client';
import { status as grpcStatus } from '@grpc/grpc-js';

/** How long a check that Temporal answers at all may take before it counts as no answer. */
const REACHABILITY_CHECK_MS = 3_000;

/** Temporal could not be reached; the message names the address, the namespace and what to check. */
export class TemporalUnreachableError extends Error {
  override readonly name = 'TemporalUnreachableError';
}

/** Whether the error, or one of its causes, is gRPC's UNAVAILABLE: the server did not answer at the transport. */
export function isGrpcUnavailable(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = (cause as Error & { cause?: unknown }).cause) {
    if (isGrpcServiceError(cause) && cause.code === grpcStatus.UNAVAILABLE) return true;
  }
  return false;
}

/** Whether the call ran out of time (our deadline), which may be a silent worker or a silent server. */
export function isOutOfTime(error: unknown): boolean {
  return isGrpcDeadlineError(error) || isGrpcCancelledError(error);
}

/** Whether the server answers a cheap call within a few seconds (GetSystemInfo needs no namespace and no worker). */
export async function temporalAnswers(client: Client): Promise<boolean> {
  try {
    await client.connection.withDeadline(Date.now() + REACHABILITY_CHECK_MS, () =>
      client.workflowService.getSystemInfo({}),
    );
    return true;
  } catch {
    return false;
  }
}

/** The address the client connects to, for messages (a custom connection may not say). */
export function addressOf(client: Client): string {
  const options = (client.connection as { options?: { address?: string } }).options;
  return options?.address ?? 'its configured address';
}

/** The one message for an outage met while `doing` something: where, what it means for the follow-up, what to check. */
export function unreachable(client: Client, doing: string, cause: unknown): TemporalUnreachableError {
  const detail = cause instanceof Error ? `: ${firstLine(cause)}` : '';
  return new TemporalUnreachableError(
    `Temporal at ${addressOf(client)} (namespace '${client.options.namespace}') is not answering while ${doing}` +
      `${detail}. The follow-ups are safe: their state is kept by Temporal and they carry on when it is back. Check ` +
      'that the server runs at that address and this machine reaches it (TEMPORAL_ADDRESS; for Temporal Cloud, ' +
      'TEMPORAL_PROFILE or TEMPORAL_API_KEY and its TLS settings).',
  );
}

/**
 * `error` as the caller should see it: TemporalUnreachableError when Temporal was out of reach (UNAVAILABLE, or a
 * deadline passed and the server does not answer a check either), else the error as it came.
 */
export async function explainOutage(client: Client, doing: string, error: unknown): Promise<unknown> {
  if (error instanceof TemporalUnreachableError) return error;
  if (isGrpcUnavailable(error)) return unreachable(client, doing, error);
  if (isOutOfTime(error) && !(await temporalAnswers(client))) return unreachable(client, doing, error);
  return error;
}

function firstLine(error: Error): string {
  const cause = (error as Error & { cause?: unknown }).cause;
  const text = cause instanceof Error && cause.message ? cause.message : error.message;
  return text.split('\n')[0] ?? text;
}

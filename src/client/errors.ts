/** The client's typed errors: what a caller can catch and act on, each naming what is wrong and what to do. */
import { describeReservedWorkflowId, type WorkflowIdMismatch } from '../workflows/follow-up/workflow-id-owner';
import { fixFor, type InputProblem } from './input';
import { NamespaceNotFoundError, NamespaceNotReadyError } from './namespace-errors';
import { TemporalUnreachableError } from './temporal-outage';

/**
 * The input broke a rule; `message` lists every problem with its field, and `problems` holds them as data (field and
 * problem, one per broken rule), for a caller that answers with them. Nothing was started.
 */
export class InvalidFollowUpInputError extends Error {
  override readonly name = 'InvalidFollowUpInputError';
  constructor(
    message: string,
    readonly problems: readonly InputProblem[],
  ) {
    super(message);
  }
}

/** The error for one problem whose message starts with its field ("projectId may contain only ..."). */
export function invalidField(field: string, message: string): InvalidFollowUpInputError {
  const problem = message.startsWith(`${field} `) ? message.slice(field.length + 1) : message;
  return new InvalidFollowUpInputError(message, [{ field, problem, fix: fixFor(field) }]);
}

/**
 * The workflow id is taken by a follow-up to another project, job or prompt, or by a workflow that is no follow-up
 * (`mismatches` says which). Nothing was sent and nothing started; the workflow under the id goes on.
 */
export class WorkflowIdInUseError extends Error {
  override readonly name = 'WorkflowIdInUseError';
  constructor(
    readonly workflowId: string,
    readonly mismatches: readonly WorkflowIdMismatch[],
    message: string,
  ) {
    super(message);
  }
}

/** The workflow id starts with `agent-followup-project/`, the project coordinators' space. Nothing was started. */
export class ReservedWorkflowIdError extends Error {
  override readonly name = 'ReservedWorkflowIdError';
  constructor(readonly workflowId: string) {
    super(describeReservedWorkflowId(workflowId));
  }
}

/** The failure a follow-up ended with before it could send, thrown by `start(..., { waitFor: 'sent' })`. */
export class FollowUpNotSentError extends Error {
  override readonly name = 'FollowUpNotSentError';
  constructor(
    readonly workflowId: string,
    /** The follow-up's failure type (AgentJobNotFound, AgentApiUnauthorized, FollowUpTimedOut, ...). */
    readonly type: string | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** No worker answered the follow-up's progress query in time: the workers listed on its task queue may have stopped. */
export class NoWorkerAnsweredError extends Error {
  override readonly name = 'NoWorkerAnsweredError';
  constructor(
    readonly workflowId: string,
    readonly timeoutMs: number,
    message = `No worker answered follow-up ${workflowId} within ${timeoutMs / 1000}s: the workers listed on its task queue may have stopped`,
  ) {
    super(message);
  }
}

/** The server's refusal to start, as one of the typed errors above when it is one of theirs; else as it came. */
export function explainStartRefusal(error: unknown, namespace: string): unknown {
  if (!(error instanceof Error)) return error;
  const cause = error.cause instanceof Error ? error.cause : undefined;
  const text = `${error.message} ${cause?.message ?? ''}`;
  const code = (cause as { code?: number } | undefined)?.code ?? (error as { code?: number }).code;
  if (/search attribute/i.test(text)) return new NamespaceNotReadyError(namespace, [cause?.message ?? error.message]);
  // gRPC NOT_FOUND naming the namespace: the server has no such namespace.
  if (code === 5 && /namespace/i.test(text)) return new NamespaceNotFoundError(namespace);
  // gRPC UNAVAILABLE: the server went away after the client connected (the SDK retried it already).
  if (code === 14) {
    return new TemporalUnreachableError(
      `Temporal stopped answering (namespace '${namespace}'): ${cause?.message ?? error.message}. Nothing was started; ` +
        'start it again once the server is back.',
    );
  }
  return error;
}

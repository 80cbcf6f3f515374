/**
 * The one POST of a callback attempt, aimed only where the workers allow: the URL's host is checked before and every
 * address at connection (address-guard.ts), a redirect is a definite failure (following it would let the receiver aim
 * the worker anywhere), and what a receiver answers is kept to its status code and the standard phrase: its body is
 * never read, so an internal service's answer cannot be read back through lastError, `status` or the logs.
 */
import { STATUS_CODES } from 'node:http';
import { ApplicationFailure } from '@temporalio/activity';
import { fetch, type Agent } from 'undici';
import { guardedAgent, refusedTarget, urlTargetRefusal, type AddressPolicy, type Resolver } from '../address-guard';

/** Where callbacks may go, beyond the public internet (AGENT_NOTIFY_ALLOW_*), and how names resolve (tests inject). */
export interface CallbackTargetSettings {
  /** AGENT_NOTIFY_ALLOW_LOOPBACK: this machine (the tests' receivers, a sidecar). */
  allowLoopback?: boolean;
  /** AGENT_NOTIFY_ALLOW_PRIVATE_NETWORKS: 10/8, 172.16/12, 192.168/16, fc00::/7, 100.64/10. */
  allowPrivateNetworks?: boolean;
  /** AGENT_NOTIFY_ALLOW_HOSTS: host names and CIDR blocks allowed whatever their class. */
  allowHosts?: readonly string[];
  /** How names become addresses (default: the system's resolver). */
  resolve?: Resolver;
}

export const CallbackPostErrorType = {
  TargetRefused: 'CallbackTargetRefused',
  Redirected: 'CallbackRedirected',
  Refused: 'CallbackRefused',
  Unreachable: 'CallbackUnreachable',
} as const;

/** A status code and its standard phrase, all that is ever told of a receiver's answer: "HTTP 500 Internal Server Error". */
export function describeStatus(status: number): string {
  return `HTTP ${status} ${STATUS_CODES[status] ?? '(no standard phrase)'}`;
}

/** Builds the guarded POST once per worker, so its connections are pooled. */
export function createCallbackPost(settings: CallbackTargetSettings) {
  const policy: AddressPolicy = {
    ...(settings.allowLoopback !== undefined ? { allowLoopback: settings.allowLoopback } : {}),
    ...(settings.allowPrivateNetworks !== undefined ? { allowPrivateNetworks: settings.allowPrivateNetworks } : {}),
    ...(settings.allowHosts !== undefined ? { allowHosts: settings.allowHosts } : {}),
    settingPrefix: 'AGENT_NOTIFY_ALLOW',
  };
  let dispatcher: Agent | undefined;
  return async function postCallback(
    url: URL,
    headers: Record<string, string>,
    body: string,
    signal: AbortSignal,
  ): Promise<{ status: number }> {
    const refusal = urlTargetRefusal(url, policy);
    if (refusal) throw ApplicationFailure.nonRetryable(`callback ${refusal}`, CallbackPostErrorType.TargetRefused);
    dispatcher ??= guardedAgent(policy, settings.resolve);
    let status: number;
    try {
      const response = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal, dispatcher });
      status = response.status;
      await response.body?.cancel().catch(() => undefined);
    } catch (error) {
      const refused = refusedTarget(error);
      if (refused)
        throw ApplicationFailure.nonRetryable(`callback ${refused.message}`, CallbackPostErrorType.TargetRefused);
      throw ApplicationFailure.retryable(
        `the callback receiver at ${url.host} could not be reached: ${connectionProblem(error)}`,
        CallbackPostErrorType.Unreachable,
      );
    }
    if (status >= 300 && status < 400) {
      throw ApplicationFailure.nonRetryable(
        `the callback receiver at ${url.host} answered ${describeStatus(status)}, a redirect, which is not followed: ` +
          'give notify.url the final address',
        CallbackPostErrorType.Redirected,
      );
    }
    if (status < 200 || status >= 300) {
      throw ApplicationFailure.retryable(
        `the callback receiver at ${url.host} answered ${describeStatus(status)}`,
        CallbackPostErrorType.Refused,
      );
    }
    return { status };
  };
}

/** A connection error by its code (ECONNREFUSED, ETIMEDOUT, …), not its text, which may quote what the peer sent. */
function connectionProblem(error: unknown): string {
  for (let each = error, depth = 0; each && depth < 5; depth++) {
    const code = (each as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    if ((each as { name?: unknown }).name === 'TimeoutError' || (each as { name?: unknown }).name === 'AbortError')
      return 'timed out or cancelled';
    each = (each as { cause?: unknown }).cause;
  }
  return error instanceof Error ? error.name : 'unknown error';
}

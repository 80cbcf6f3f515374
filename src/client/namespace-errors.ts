/** What a namespace may lack, as errors a caller can tell apart; thrown by the library and by a starting worker. */
import { searchAttributeFix } from './namespace-setup';

/**
 * The namespace lacks the follow-up's search attributes (a worker would fail every follow-up's workflow task, and the
 * server refuses to start one); the message names them and the fix (`npx agent-followup setup`). Nothing was started.
 */
export class NamespaceNotReadyError extends Error {
  override readonly name = 'NamespaceNotReadyError';
  constructor(
    readonly namespace: string,
    readonly problems: string[],
  ) {
    super(searchAttributeFix(namespace, problems));
  }
}

/** The namespace does not exist on the server the client is connected to. Nothing was started. */
export class NamespaceNotFoundError extends Error {
  override readonly name = 'NamespaceNotFoundError';
  constructor(readonly namespace: string) {
    super(
      `Namespace '${namespace}' does not exist on this Temporal server: check TEMPORAL_NAMESPACE (or the profile's namespace), ` +
        `or create it (temporal operator namespace create --namespace ${namespace})`,
    );
  }
}

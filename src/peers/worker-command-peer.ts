/**
 * Imported first by the `agent-followup-worker` command: a missing `@temporalio/worker` is one line on stderr and
 * exit 1, as the command's other start-up errors are, not a stack trace.
 */
import { MissingPeerError, requirePeers } from './optional-peers';

try {
  requirePeers('agent-followup-worker', ['@temporalio/worker']);
} catch (error) {
  if (!(error instanceof MissingPeerError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}

/** Imported first by `agent-followup/worker`, so a missing `@temporalio/worker` is said plainly. */
import { requirePeers } from './optional-peers';

requirePeers('agent-followup/worker', ['@temporalio/worker']);

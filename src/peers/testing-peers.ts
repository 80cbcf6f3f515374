/** Imported first by `agent-followup/testing`, which runs a dev server and a worker. */
import { requirePeers } from './optional-peers';

requirePeers('agent-followup/testing', ['@temporalio/testing', '@temporalio/worker']);

/**
 * The client, as the design card names it: start, follow and cancel follow-ups, read their progress, ask for a read
 * now, manage the projects' send budgets. Its parts live in client/: the FollowUpClient (follow-up-client.ts), what its
 * calls take and answer (calls.ts), the checks made before anything starts (checks.ts), its typed errors (errors.ts),
 * ids, outcomes and the words for an outage. This module is the one the library entry imports.
 */

// The client, what its calls take and answer, and its errors.
export { FollowUpClient } from './client/follow-up-client';
export {
  checkListFilter,
  LIST_LIMIT_MAX,
  LIST_STATES,
  type FollowUpList,
  type FollowUpListFilter,
  type ListedFollowUp,
  type ListState,
} from './client/follow-up-list';
export * from './client/calls';
export * from './kernel/types';
export type { AgentJob } from './agent-api/schemas';
export type { SharedWatchFigures, SharedWatchStatus } from './watch/watch-figures';
export type { ProjectView } from './coordinator/project-coordination';
export type { WorkflowIdMismatch } from './workflows/follow-up/workflow-id-owner';
export {
  FollowUpNotSentError,
  InvalidFollowUpInputError,
  NoWorkerAnsweredError,
  ReservedWorkflowIdError,
  WorkflowIdInUseError,
} from './client/errors';
export { NamespaceNotFoundError, NamespaceNotReadyError } from './client/namespace-errors';
export { NamespaceSetupError, setUpNamespace } from './client/namespace-setup';
export { TemporalUnreachableError } from './client/temporal-outage';

// How a follow-up ended, as one value to switch on.
export {
  endedOutcome,
  failedOutcome,
  settleFollowUp,
  type FollowUpDidNotEnd,
  type FollowUpEnded,
  type FollowUpFailureType,
  type FollowUpOutcome,
} from './client/outcome';
export { isTerminal } from './kernel/agent-job';
export { FOLLOW_UP_OUTCOME_KINDS } from './kernel/outcome-kind';

// The input and its rules, checked before anything starts; default ids.
export type { FollowUpInput, FollowUpRequest, InputProblem } from './client/input';
export {
  checkFollowUpInput,
  checkFollowUpWorkflowId,
  maxPromptLengthFromEnv,
  type BudgetOptions,
} from './client/checks';
export { DEFAULT_MAX_PROMPT_LENGTH, inspectFollowUpInput } from './kernel/request';
export { optionDifferences } from './client/option-differences';
export { followUpWorkflowId, tupleDigest } from './client/ids';
/** The follow-up's workflow type, for a starter in another language or `temporal workflow start`. */
export { FOLLOW_UP_WORKFLOW_TYPE } from './kernel/workflow-ids';

// The send budget's rule.
export {
  DEFAULT_SENDS_PER_PROJECT_PER_HOUR,
  plainWholeNumber,
  sendBudgetProblem,
  VENDOR_SENDS_PER_PROJECT_PER_HOUR,
} from './kernel/send-budget-rule';

// The words the Web UI shows a follow-up and a budget in, for a front end of one's own (the CLI is one).
export { budgetPastDeadline, queuedLine, refusalLine, roughDuration, utcClock } from './kernel/words';
export { excerpt } from './client/start-metadata';

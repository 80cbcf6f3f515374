import { COORDINATOR_ID_PREFIX, isCoordinatorWorkflowId, WATCHER_ID_PREFIX } from '../../kernel/workflow-ids';

/** What makes two follow-ups the same one; the options (polling, onAmbiguousSend) may differ and still attach. */
export interface FollowUpIdentity {
  projectId: string;
  jobId: string;
  prompt: string;
}

export const IDENTITY_FIELDS = ['projectId', 'jobId', 'prompt'] as const;
export type IdentityField = (typeof IDENTITY_FIELDS)[number];

/** What stands between a start and the workflow already under its id: another type of workflow, or these fields. */
export type WorkflowIdMismatch = 'workflowType' | IdentityField;

/** The workflow found under a taken id, as its first history event records it. */
export interface ExistingWorkflow {
  workflowType: string;
  /** Its first argument, as given by whoever started it (not checked: another starter may have passed anything). */
  input: unknown;
}

/** Prompts may run to 100,000 characters and be private; messages show at most this much of one. */
export const PROMPT_EXCERPT_LENGTH = 40;

/** The identity fields of any input; a field that is missing or not a string is undefined (it matches nothing). */
export function identityOf(input: unknown): Partial<FollowUpIdentity> {
  const record = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  const identity: Partial<FollowUpIdentity> = {};
  for (const field of IDENTITY_FIELDS) {
    const value = record[field];
    if (typeof value === 'string') identity[field] = value;
  }
  return identity;
}

/**
 * Why a start under this id may not attach to `existing`, in a fixed order; empty when it is the same follow-up. A
 * workflow of another type differs in its type alone: its input is not a follow-up's, so its fields say nothing.
 */
export function workflowIdMismatches(
  asked: FollowUpIdentity,
  existing: ExistingWorkflow,
  followUpType: string,
): WorkflowIdMismatch[] {
  if (existing.workflowType !== followUpType) return ['workflowType'];
  const found = identityOf(existing.input);
  return IDENTITY_FIELDS.filter((field) => found[field] !== asked[field]);
}

/** A prompt shortened for a message: white space runs made one space, at most PROMPT_EXCERPT_LENGTH characters, quoted. */
export function promptExcerpt(prompt: string): string {
  const flat = prompt.replace(/\s+/g, ' ').trim();
  const short = flat.length > PROMPT_EXCERPT_LENGTH ? `${flat.slice(0, PROMPT_EXCERPT_LENGTH - 1)}…` : flat;
  return JSON.stringify(short);
}

const FIELD_NAMES: Record<IdentityField, string> = { projectId: 'project', jobId: 'job', prompt: 'prompt' };

const FIX = 'Pick another workflow id (--workflow-id), or leave it out to use the deterministic one.';

/** The message for a start refused because its id is taken by another follow-up, or by another type of workflow. */
export function describeWorkflowIdInUse(
  workflowId: string,
  asked: FollowUpIdentity,
  existing: ExistingWorkflow,
  mismatches: readonly WorkflowIdMismatch[],
): string {
  const refused = 'Nothing was sent; the workflow under that id goes on.';
  if (mismatches.includes('workflowType')) {
    return `workflow id '${workflowId}' belongs to a workflow of type '${existing.workflowType}', not to a follow-up. ${refused} ${FIX}`;
  }
  const found = identityOf(existing.input);
  const fields = mismatches
    .filter((field): field is IdentityField => field !== 'workflowType')
    .map((field) => `the ${FIELD_NAMES[field]}`);
  return (
    `workflow id '${workflowId}' belongs to a follow-up to ${describeIdentity(found)}; you asked for ${describeIdentity(asked)}: ` +
    `${joinWords(fields)} ${fields.length === 1 ? 'differs' : 'differ'}. ${refused} ${FIX}`
  );
}

/** Why a follow-up may not run under `workflowId`, or undefined when it may. */
export function reservedWorkflowIdProblem(workflowId: string): string | undefined {
  if (workflowId.startsWith(WATCHER_ID_PREFIX)) {
    return `workflow id '${workflowId}' is reserved: ids starting with '${WATCHER_ID_PREFIX}' belong to the job watchers, never to a follow-up`;
  }
  if (!isCoordinatorWorkflowId(workflowId)) return undefined;
  return (
    `workflow id '${workflowId}' is reserved: ids starting with '${COORDINATOR_ID_PREFIX}' belong to the project ` +
    'coordinators, never to a follow-up'
  );
}

/** The message for a follow-up start refused by the client because its id is in the coordinators' space. */
export function describeReservedWorkflowId(workflowId: string): string {
  return `${reservedWorkflowIdProblem(workflowId) ?? `workflow id '${workflowId}' is reserved`}. Nothing was started. ${FIX}`;
}

function describeIdentity(identity: Partial<FollowUpIdentity>): string {
  const quoted = (value: string | undefined) => (value === undefined ? '(none)' : `'${value}'`);
  const prompt = identity.prompt === undefined ? 'no prompt' : `prompt ${promptExcerpt(identity.prompt)}`;
  return `project ${quoted(identity.projectId)}, job ${quoted(identity.jobId)} with ${prompt}`;
}

function joinWords(words: string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words[words.length - 1] ?? ''}`;
}

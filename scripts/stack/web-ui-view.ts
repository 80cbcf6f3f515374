/**
 * The Web UI's view of follow-ups, saved once per browser (docs/WEB-UI.md): the list query and the columns that
 * answer "which job, which project, what happened" without opening each follow-up. The Temporal UI keeps columns in
 * the browser's localStorage, per namespace, under `namespace-workflow-table-columns`.
 */

/** Every follow-up, newest first (the UI's default order). Add `AND AgentProjectId="…"` to narrow it. */
export const FOLLOW_UP_LIST_QUERY = 'WorkflowType="followUpWorkflow"';

/**
 * The columns, in order; Status stays pinned while scrolling sideways. What a person acts on comes first: the job's
 * status, the outcome and the pull request, then the workflow id (the link to its page; the project and job are in
 * it too). The workflow id is long, and longer still for a schedule's runs: put first, it pushed the job status and
 * the pull request past the right edge at 1600 px (`npm run screenshots` checks they fit).
 */
export const FOLLOW_UP_LIST_COLUMNS = [
  'Status',
  'AgentJobStatus',
  'AgentFollowUpOutcome',
  'AgentPrLink',
  'Workflow ID',
  'AgentProjectId',
  'AgentJobId',
  'Start',
  'End',
] as const;

/** The columns that must show whole at 1600 px. */
export const COLUMNS_ON_SCREEN = ['Status', 'AgentJobStatus', 'AgentFollowUpOutcome', 'AgentPrLink'] as const;

/** Where the Temporal UI keeps each namespace's list columns, in the browser's localStorage. */
const COLUMNS_STORAGE_KEY = 'namespace-workflow-table-columns';

/** The columns as the UI stores them. */
function storedColumns(): Array<{ label: string; pinned: boolean }> {
  return FOLLOW_UP_LIST_COLUMNS.map((label, index) => ({ label, pinned: index < 1 }));
}

/** The localStorage value that sets these columns for `namespace` (keeping other namespaces' columns as they are). */
export function columnsStorageValue(namespace: string, existing: Record<string, unknown> = {}): string {
  return JSON.stringify({ ...existing, [namespace]: storedColumns() });
}

/** The line to paste into the browser's console on the Web UI once, then reload: the view's columns. */
export function columnsConsoleSnippet(namespace: string): string {
  const key = COLUMNS_STORAGE_KEY;
  return `localStorage.setItem('${key}', JSON.stringify({ ...JSON.parse(localStorage.getItem('${key}') || '{}'), ${JSON.stringify(namespace)}: ${JSON.stringify(storedColumns())} }))`;
}

/** The script that sets the columns before the UI's own code runs (a browser context's init script). */
export function columnsInitScript(namespace: string): string {
  return `localStorage.setItem('${COLUMNS_STORAGE_KEY}', ${JSON.stringify(columnsStorageValue(namespace))});`;
}

/** The list's address in a Web UI at `uiBase` (e.g. http://localhost:8233). */
export function followUpListUrl(uiBase: string, namespace: string, query: string = FOLLOW_UP_LIST_QUERY): string {
  return `${uiBase.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows?query=${encodeURIComponent(query)}`;
}

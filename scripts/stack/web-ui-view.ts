/**
 * The Web UI's view of follow-ups, saved once per browser (docs/WEB-UI.md): the list query and the columns that
 * answer "which job, which project, what happened" without opening each follow-up. The Temporal UI keeps columns in
 * the browser's localStorage, per namespace, under `namespace-workflow-table-columns`.
 */

/** Every follow-up, newest first (the UI's default order). Add `AND AgentProjectId="…"` to narrow it. */
export const FOLLOW_UP_LIST_QUERY = 'WorkflowType="followUpWorkflow"';

/**
 * The columns, in order; the first two stay pinned while scrolling sideways. What a person acts on comes first: the
 * outcome and the pull request right after the (long) workflow id, so at 1600 px the pull-request column still starts
 * on screen (docs/screenshots/list.png); project and job, also in the id, follow.
 */
export const FOLLOW_UP_LIST_COLUMNS = [
  'Status',
  'Workflow ID',
  'AgentFollowUpOutcome',
  'AgentPrLink',
  'AgentJobStatus',
  'AgentProjectId',
  'AgentJobId',
  'Start',
  'End',
] as const;

/** Where the Temporal UI keeps each namespace's list columns, in the browser's localStorage. */
const COLUMNS_STORAGE_KEY = 'namespace-workflow-table-columns';

/** The columns as the UI stores them. */
function storedColumns(): Array<{ label: string; pinned: boolean }> {
  return FOLLOW_UP_LIST_COLUMNS.map((label, index) => ({ label, pinned: index < 2 }));
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

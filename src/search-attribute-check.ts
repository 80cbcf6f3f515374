/**
 * A worker refuses to start on a namespace without our search attributes: the workflow upserts them, and an upsert
 * of an unregistered attribute fails the workflow task again and again, which would leave every follow-up stuck.
 * Checking once at start-up turns that into one clear message with the fix.
 */
import type { NativeConnection } from '@temporalio/worker';
import { FOLLOW_UP_SEARCH_ATTRIBUTES } from './follow-up/search-attributes';

type OperatorService = NativeConnection['operatorService'];
/** gRPC codes meaning "you may not ask", not "something is wrong": PERMISSION_DENIED, UNIMPLEMENTED, UNAUTHENTICATED. */
const NOT_ALLOWED_TO_ASK = new Set([7, 12, 16]);

export type SearchAttributeCheck =
  | { ok: true }
  | { ok: false; problems: string[] }
  /** The server would not say (e.g. an API key without operator rights): the worker warns and goes on. */
  | { ok: 'unknown'; reason: string };

const KEYWORD = 2; // temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD

/** Compares the namespace's custom attributes with ours; pure, so it is tested without a server. */
export function compareSearchAttributes(custom: Record<string, number>): string[] {
  const problems: string[] = [];
  for (const key of FOLLOW_UP_SEARCH_ATTRIBUTES) {
    const type = custom[key.name];
    if (type === undefined) problems.push(`${key.name} is not registered`);
    else if (type !== KEYWORD) problems.push(`${key.name} is registered with another type than Keyword`);
  }
  return problems;
}

export async function checkSearchAttributes(operator: OperatorService, namespace: string): Promise<SearchAttributeCheck> {
  let custom: Record<string, number>;
  try {
    const response = await operator.listSearchAttributes({ namespace });
    custom = Object.fromEntries(Object.entries(response.customAttributes ?? {}).map(([name, type]) => [name, Number(type)]));
  } catch (error) {
    const code = (error as { code?: number }).code;
    if (code !== undefined && NOT_ALLOWED_TO_ASK.has(code)) {
      return { ok: 'unknown', reason: (error as Error).message };
    }
    throw error;
  }
  const problems = compareSearchAttributes(custom);
  return problems.length === 0 ? { ok: true } : { ok: false, problems };
}

/** The message a worker prints when the check fails. */
export function searchAttributeFix(namespace: string, problems: string[]): string {
  return (
    `Namespace '${namespace}' lacks agent-followup's search attributes (${problems.join('; ')}). ` +
    'Register them once per namespace with `scripts/register-search-attributes.sh` (TEMPORAL_ADDRESS and ' +
    'TEMPORAL_NAMESPACE select the cluster), or on Temporal Cloud in the Cloud UI or with ' +
    `\`tcld namespace search-attributes add\` (${FOLLOW_UP_SEARCH_ATTRIBUTES.map((key) => key.name).join(', ')}, all Keyword).`
  );
}

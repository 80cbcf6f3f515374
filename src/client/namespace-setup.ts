/**
 * A worker refuses to start on a namespace without our search attributes: the workflow upserts them, and an upsert
 * of an unregistered attribute fails the workflow task again and again, which would leave every follow-up stuck.
 * Checking once at start-up turns that into one clear message with the fix.
 */
import type { Connection } from '@temporalio/client';
import { FOLLOW_UP_SEARCH_ATTRIBUTES } from '../kernel/search-attributes';

/** What the check and the set-up ask of the operator API (the client's and the worker's connections both have it). */
type OperatorService = Pick<Connection['operatorService'], 'listSearchAttributes' | 'addSearchAttributes'>;
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

async function customAttributes(operator: OperatorService, namespace: string): Promise<Record<string, number>> {
  const response = await operator.listSearchAttributes({ namespace });
  return Object.fromEntries(
    Object.entries(response.customAttributes ?? {}).map(([name, type]) => [name, Number(type)]),
  );
}

export async function checkSearchAttributes(
  operator: OperatorService,
  namespace: string,
): Promise<SearchAttributeCheck> {
  let custom: Record<string, number>;
  try {
    custom = await customAttributes(operator, namespace);
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
    'Register them once per namespace with `npx agent-followup setup` (TEMPORAL_ADDRESS and ' +
    'TEMPORAL_NAMESPACE select the cluster), or on Temporal Cloud in the Cloud UI or with ' +
    `\`tcld namespace search-attributes add\` (${FOLLOW_UP_SEARCH_ATTRIBUTES.map((key) => key.name).join(', ')}, all Keyword).`
  );
}

/** The set-up cannot finish; the message says why and what to do instead. */
export class NamespaceSetupError extends Error {
  override name = 'NamespaceSetupError';
}

/**
 * Registers the follow-up's search attributes on a namespace (`agent-followup setup`): those missing are added, those
 * present are left alone, so running it again changes nothing. One registered with another type cannot be changed
 * in place, so that is an error that says so.
 */
export async function setUpNamespace(
  operator: OperatorService,
  namespace: string,
): Promise<{ added: string[]; present: string[] }> {
  let custom: Record<string, number>;
  try {
    custom = await customAttributes(operator, namespace);
  } catch (error) {
    throw new NamespaceSetupError(
      notAllowed(namespace, error) ??
        `could not list the search attributes of namespace '${namespace}': ${(error as Error).message}`,
    );
  }
  const names = FOLLOW_UP_SEARCH_ATTRIBUTES.map((key) => key.name);
  const mistyped = names.filter((name) => custom[name] !== undefined && custom[name] !== KEYWORD);
  if (mistyped.length > 0) {
    throw new NamespaceSetupError(
      `namespace '${namespace}' has ${mistyped.join(', ')} registered with another type than Keyword; a search attribute's type cannot ` +
        'be changed in place: remove it (temporal operator search-attribute remove) or use another namespace, then run setup again',
    );
  }
  const missing = names.filter((name) => custom[name] === undefined);
  if (missing.length > 0) {
    try {
      await operator.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map((name) => [name, KEYWORD])),
      });
    } catch (error) {
      throw new NamespaceSetupError(
        notAllowed(namespace, error) ??
          `could not register ${missing.join(', ')} on namespace '${namespace}': ${(error as Error).message}`,
      );
    }
  }
  return { added: missing, present: names.filter((name) => !missing.includes(name)) };
}

/** The message for a refusal to use the operator API (a Temporal Cloud API key, a restricted role), else undefined. */
function notAllowed(namespace: string, error: unknown): string | undefined {
  const code = (error as { code?: number }).code;
  if (code === undefined || !NOT_ALLOWED_TO_ASK.has(code)) return undefined;
  return (
    `this connection may not manage the search attributes of namespace '${namespace}' (${(error as Error).message}). ` +
    `Register ${FOLLOW_UP_SEARCH_ATTRIBUTES.map((key) => key.name).join(', ')} (all Keyword) as an administrator: on Temporal Cloud in the ` +
    'Cloud UI (Namespace, Search Attributes) or with `tcld namespace search-attributes add`'
  );
}

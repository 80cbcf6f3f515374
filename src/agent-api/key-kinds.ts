/**
 * The vendor's other key kinds (VENDOR-FACTS.md, "API keys"): the admin prefix, then a longer one after it. The agent
 * endpoints refuse them; the worker catches one at start-up, and the simulator refuses one as the vendor does.
 */
export const NON_ADMIN_KEY_KINDS = [
  { infix: 'dsc', name: 'an assistant' },
  { infix: 'us', name: 'a search/index' },
] as const;

/** The non-admin kind of a key under the `mint` prefix, if it is one. */
export function nonAdminKeyKind(key: string, prefix: string): (typeof NON_ADMIN_KEY_KINDS)[number] | undefined {
  return prefix === 'mint' ? NON_ADMIN_KEY_KINDS.find((kind) => key.startsWith(`${prefix}_${kind.infix}_`)) : undefined;
}

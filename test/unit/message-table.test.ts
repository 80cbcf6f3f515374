/**
 * HOW-IT-WORKS's table of every message between our workflows is kept true to the code: each signal, update and query
 * defined in src/ (by `signalNamed`, `updateNamed`, `queryNamed`) has one row of its kind, and the table has no other
 * row; the count in the sentence above it is the table's. A message added, removed, renamed or moved to another kind
 * without the table fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** Every `.ts` file below a folder. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** `name → kind` of each message the code defines. */
function definedMessages(): Map<string, string> {
  const defined = new Map<string, string>();
  for (const file of sources(join(ROOT, 'src'))) {
    const text = readFileSync(file, 'utf8');
    // The generic arguments may hold parentheses' worth of types but never a quote: up to the name's opening quote.
    for (const match of text.matchAll(/\b(signal|update|query)Named\s*(?:<[^'"`]*?>)?\(\s*['"]([A-Za-z0-9_]+)['"]/g)) {
      const [, kind, name] = match as unknown as [string, string, string];
      if (defined.has(name)) throw new Error(`message ${name} is defined twice (the second time in ${file})`);
      defined.set(name, kind);
    }
  }
  return defined;
}

/** The table under "Every message between our workflows": `name → kind` as its rows say, and the count above it. */
function tabledMessages(): { rows: Map<string, string>; said: string } {
  const section = /### Every message between our workflows\n([\s\S]*?)\n#{2,3} /.exec(
    readFileSync(join(ROOT, 'docs', 'HOW-IT-WORKS.md'), 'utf8'),
  )?.[1];
  if (!section) throw new Error('docs/HOW-IT-WORKS.md has no section "### Every message between our workflows"');
  const rows = new Map<string, string>();
  for (const [, name, kind] of section.matchAll(/^\| `([A-Za-z0-9_]+)` \| (signal|update|query)\b/gm)) {
    if (name && kind) rows.set(name, kind);
  }
  const said = /\b([A-Z][a-z-]+) kinds\b/.exec(section)?.[1] ?? '(no count)';
  return { rows, said };
}

const NUMBERS = ['Zero', 'One', 'Two', 'Three', 'Four', 'Five', 'Six', 'Seven', 'Eight', 'Nine', 'Ten', 'Eleven'];
const TEENS = ['Twelve', 'Thirteen', 'Fourteen', 'Fifteen', 'Sixteen', 'Seventeen', 'Eighteen', 'Nineteen'];
const TENS = ['', '', 'Twenty', 'Thirty'];

/** 0 to 39 in words, as the docs write a count at the start of a sentence. */
function inWords(n: number): string {
  if (n < 12) return NUMBERS[n] as string;
  if (n < 20) return TEENS[n - 12] as string;
  const ones = n % 10;
  return `${TENS[Math.floor(n / 10)]}${ones ? `-${(NUMBERS[ones] as string).toLowerCase()}` : ''}`;
}

test("HOW-IT-WORKS's message table has one row for each message the code defines, of its kind, and no other", () => {
  const defined = definedMessages();
  const { rows } = tabledMessages();
  expect(defined.size).toBeGreaterThan(10);
  expect(Object.fromEntries([...rows].sort())).toEqual(Object.fromEntries([...defined].sort()));
});

test('the count of message kinds above the table is the number of rows', () => {
  const { rows, said } = tabledMessages();
  expect(said).toBe(inWords(rows.size));
});

test('the count is written as the docs write it', () => {
  expect([inWords(17), inWords(20), inWords(21), inWords(30)]).toEqual(['Seventeen', 'Twenty', 'Twenty-one', 'Thirty']);
});

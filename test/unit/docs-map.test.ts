/**
 * The docs stay true to the tree: HOW-IT-WORKS's map of the code names every entry at the top of `src/` and every
 * folder of `scripts/`, and nothing that is not there; every path the docs quote exists. docs/BENCHMARKS.md is
 * left out: its runs record code as it was when they were measured.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The names in the map's text block, folder by folder (`src/`, then `scripts/`), as the map writes them. */
function mapEntries(): { src: Set<string>; scripts: Set<string> } {
  const block = /## The code[\s\S]*?```text\n([\s\S]*?)```/.exec(read('docs/HOW-IT-WORKS.md'))?.[1];
  if (!block) throw new Error("docs/HOW-IT-WORKS.md has no map of the code (a ```text block under '## The code')");
  const src = new Set<string>();
  const scripts = new Set<string>();
  let into: Set<string> | null = null;
  for (const line of block.split('\n')) {
    if (/^src\/\s*$/.test(line)) into = src;
    else if (/^scripts\/(\s|$)/.test(line)) into = scripts;
    // An entry is a name at the start of an indented line; in src/, also a file the line names after it (`a.ts ...; b.ts ...`).
    const pattern = into === src ? /(?:^\s{2}|;\s)([A-Za-z0-9_.-]+(?:\.ts|\/))/g : /^\s{2}([A-Za-z0-9_.-]+\/)/g;
    const named = [...line.matchAll(pattern)].map((match) => match[1] as string);
    for (const name of named) into?.add(name.replace(/\/$/, ''));
  }
  return { src, scripts };
}

test("HOW-IT-WORKS's map names every entry at the top of src/ and every folder of scripts/, and only those", () => {
  const { src, scripts } = mapEntries();
  const inSrc = readdirSync(join(ROOT, 'src'), { withFileTypes: true }).map((entry) => entry.name);
  const inScripts = readdirSync(join(ROOT, 'scripts'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
  expect({ src: [...src].sort(), scripts: [...scripts].sort() }).toEqual({
    src: inSrc.sort(),
    scripts: inScripts.sort(),
  });
});

test('every path the README and the docs quote exists', () => {
  const docs = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md') && name !== 'BENCHMARKS.md')
      .map((name) => `docs/${name}`),
  ];
  const missing = docs.flatMap((doc) =>
    [...read(doc).matchAll(/`((?:src|scripts|test|docs)\/[A-Za-z0-9_./-]+)`/g)]
      .map((match) => match[1] as string)
      .filter((path) => !existsSync(join(ROOT, path)))
      .map((path) => `${doc}: ${path}`),
  );
  expect(missing).toEqual([]);
});

test('the README stays a front page: at most 300 lines, the rest in docs/', () => {
  expect(read('README.md').split('\n').length).toBeLessThanOrEqual(300);
});

/**
 * What a service pays to load the library: the time `require` takes and the modules it loads, for our entry beside
 * `@temporalio/client` and zod alone (what any Temporal client with input checks loads anyway). Each measurement is
 * a fresh Node process, the two alternating, so both see the same machine.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { percentile } from './stats';

export interface ImportRow {
  label: string;
  /** Median and worst time of the `require` calls, in milliseconds (Node's own start-up excluded). */
  p50Ms: number;
  maxMs: number;
  modules: number;
  /** Whether the worker SDK or the native core bridge was loaded. */
  loadsWorker: boolean;
}

/** The repository: the nearest directory up from here with our package.json (this file runs from dist/scripts/bench). */
function repositoryRoot(): string {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'src', 'index.ts'))) return dir;
  }
  throw new Error(`no repository root above ${__dirname}`);
}

const ROOT = repositoryRoot();

function measureOnce(requires: string[]): { ms: number; modules: number; loadsWorker: boolean } {
  const script = [
    'const start = process.hrtime.bigint();',
    ...requires.map((path) => `require(${JSON.stringify(path)});`),
    'const ms = Number(process.hrtime.bigint() - start) / 1e6;',
    'const keys = Object.keys(require.cache);',
    'const loadsWorker = keys.some((key) => /@temporalio[\\\\/](worker|core-bridge)[\\\\/]/.test(key));',
    'console.log(JSON.stringify({ ms, modules: keys.length, loadsWorker }));',
  ].join('\n');
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' })) as {
    ms: number;
    modules: number;
    loadsWorker: boolean;
  };
}

export function runImportTime(options: { runs: number; log: (line: string) => void }): ImportRow[] {
  const candidates = [
    { label: '`@temporalio/client` + zod', requires: ['@temporalio/client', 'zod'] },
    { label: '`agent-followup` (the library entry)', requires: [join(ROOT, 'dist', 'src', 'index.js')] },
  ];
  const samples = candidates.map(() => [] as Array<{ ms: number; modules: number; loadsWorker: boolean }>);
  for (let run = 0; run < options.runs; run += 1) {
    candidates.forEach((candidate, index) => samples[index]?.push(measureOnce(candidate.requires)));
  }
  const rows = candidates.map((candidate, index) => {
    const runs = samples[index] ?? [];
    const times = runs.map((sample) => sample.ms);
    return {
      label: candidate.label,
      p50Ms: percentile(times, 50),
      maxMs: Math.max(...times),
      modules: runs[0]?.modules ?? 0,
      loadsWorker: runs.some((sample) => sample.loadsWorker),
    };
  });
  for (const row of rows) options.log(`import ${row.label}: p50 ${row.p50Ms.toFixed(0)} ms, ${row.modules} modules`);
  return rows;
}

/** A report's "against the targets" table: each target, what the run measured, and whether it was met. */

/** A target, the figure measured, and PASS (true), MISS (false) or n/a (undefined: not measured). */
export type TargetRow = [target: string, measured: string, met: boolean | undefined];

/** Whether a measured value meets its target; undefined when it was not measured (NaN). */
export function meets(value: number, ok: (value: number) => boolean): boolean | undefined {
  return Number.isFinite(value) ? ok(value) : undefined;
}

export function targetTable(heading: string, rows: readonly TargetRow[]): string[] {
  if (rows.length === 0) return [];
  return [
    heading,
    '',
    '| target | measured | |',
    '|---|---|---|',
    ...rows.map(
      ([target, measured, met]) => `| ${target} | ${measured} | ${met === undefined ? 'n/a' : met ? 'PASS' : 'MISS'} |`,
    ),
    '',
  ];
}

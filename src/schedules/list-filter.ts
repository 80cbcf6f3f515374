/** The filter `list` takes, turned into a visibility query on the schedules' search attributes. */
import { identifierProblem } from '../kernel/request';
import { AgentJobId, AgentProjectId } from '../kernel/search-attributes';
import { InvalidScheduleError } from './request';

/** What `list` may be narrowed to. */
export interface ListSchedulesFilter {
  projectId?: string;
  jobId?: string;
  /** At most this many schedules (default 100). */
  limit?: number;
}

/** A visibility query on the schedule's search attributes; the ids are checked first, so nothing can be injected. */
export function listQuery(filter: ListSchedulesFilter): string | undefined {
  const clauses: string[] = [];
  const problems: string[] = [];
  for (const [field, key] of [
    ['projectId', AgentProjectId.name],
    ['jobId', AgentJobId.name],
  ] as const) {
    const value = filter[field];
    if (value === undefined) continue;
    const problem = identifierProblem(field, value);
    if (problem) problems.push(problem);
    else clauses.push(`${key} = "${value}"`);
  }
  if (problems.length > 0) throw new InvalidScheduleError(`Invalid filter: ${problems.join('; ')}`);
  return clauses.length > 0 ? clauses.join(' AND ') : undefined;
}

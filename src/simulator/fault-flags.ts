/**
 * The `--fault OPERATION:KIND[:RATE[:PARAM]]` flag of `npm run simulator`, parsed into a FaultRule. Kept apart from
 * main.ts so it can be unit-tested without starting a process.
 */
import {
  FAULT_KINDS,
  FAULT_OPERATIONS,
  FaultRuleSchema,
  describeIssues,
  type FaultKind,
  type FaultOperation,
  type FaultRule,
} from './faults';

export const FAULT_FLAG_USAGE = 'OPERATION:KIND[:RATE[:PARAM]]';

// Plain decimals only: Number() would also take '', '0x1', '1e-1' and ' 1', which are more likely typos than intent.
const DECIMAL = /^(?:\d+(?:\.\d+)?|\.\d+)$/;
const DIGITS = /^\d+$/;

/** Parses one `--fault` value, e.g. `get:status:0.2:503`; throws an Error that says what is wrong and what fits. */
export function parseFaultFlag(text: string): FaultRule {
  const fail = (problem: string): never => {
    throw new Error(`--fault ${JSON.stringify(text)}: ${problem} (expected ${FAULT_FLAG_USAGE})`);
  };
  const parts = text.split(':');
  if (parts.length < 2 || parts.length > 4) fail(`expected 2 to 4 parts separated by ':', got ${parts.length}`);
  const [operationText = '', kindText = '', rateText, paramText] = parts;

  if (!(FAULT_OPERATIONS as readonly string[]).includes(operationText)) {
    fail(`OPERATION must be one of ${FAULT_OPERATIONS.join(', ')}, got ${JSON.stringify(operationText)}`);
  }
  if (!(FAULT_KINDS as readonly string[]).includes(kindText)) {
    fail(`KIND must be one of ${FAULT_KINDS.join(', ')}, got ${JSON.stringify(kindText)}`);
  }
  const rule: FaultRule = { operation: operationText as FaultOperation, kind: kindText as FaultKind };

  if (rateText !== undefined) {
    const rate = Number(rateText);
    if (!DECIMAL.test(rateText) || rate > 1)
      fail(`RATE must be a probability from 0 to 1 such as 0.25, got ${JSON.stringify(rateText)}`);
    rule.rate = rate;
  }

  if (rule.kind === 'status' || rule.kind === 'latency') {
    const what = rule.kind === 'status' ? 'an HTTP status code such as 503' : 'a number of milliseconds such as 2000';
    if (paramText === undefined) fail(`KIND '${rule.kind}' needs PARAM, ${what}`);
    else if (!DIGITS.test(paramText)) fail(`PARAM must be ${what}, got ${JSON.stringify(paramText)}`);
    else if (rule.kind === 'status') rule.status = Number(paramText);
    else rule.latencyMs = Number(paramText);
  } else if (paramText !== undefined) {
    fail(`KIND '${rule.kind}' takes no PARAM (only status and latency do)`);
  }

  // The schema has the last word (status range, latency cap, stale reads on sends), so the flag cannot drift from it.
  const parsed = FaultRuleSchema.safeParse(rule);
  if (!parsed.success) fail(describeIssues(parsed.error));
  return rule;
}

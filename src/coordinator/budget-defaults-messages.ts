/**
 * The one message the budget defaults take, as a plain definition the client shares without loading the workflow SDK.
 * What it holds is read from its memo (DEFAULT_BUDGET_MEMO_KEY), not by query: workers read it without a worker.
 */
import { signalNamed } from '../kernel/message-definitions';
import type { BudgetRequest } from '../kernel/send-budget-rule';

/**
 * To the budget defaults: every project's budget unless set for the project (null: the workers' setting again), held
 * to the CLI's rule in the workflow (whole, at most the vendor's 100 unless it carries `aboveVendorLimit: true`).
 */
export const setDefaultBudgetSignal = signalNamed<[BudgetRequest]>('setDefaultBudget');

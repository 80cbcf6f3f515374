/** The messages the budget defaults take, as plain definitions the client shares without loading the workflow SDK. */
import { queryNamed, signalNamed } from '../../kernel/message-definitions';

/** To the budget defaults: every project's budget unless set for the project (null: the workers' setting again). */
export const setDefaultBudgetSignal = signalNamed<[{ sendsPerHour: number | null }]>('setDefaultBudget');

/** The budget defaults: the namespace's default budget per project, or null (the workers' setting). */
export const defaultBudgetQuery = queryNamed<{ sendsPerHour: number | null }>('defaultBudget');

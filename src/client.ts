/**
 * The client, as the design card names it: start, follow and cancel follow-ups, read their progress, ask for a read
 * now, manage the projects' send budgets. Its parts live in client/ (errors, ids, outcomes, outage words); this module
 * is the one the library entry and the CLI import.
 */
export * from './client/index';

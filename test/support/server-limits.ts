/**
 * The test server refuses a run longer than this many events (`limit.historyCount.error`) and suggests continue-as-new
 * well before (global-setup.ts), so every test also checks that a follow-up's history stays bounded.
 */
export const TEST_SERVER_HISTORY_LIMIT = 400;
export const TEST_SERVER_CONTINUE_AS_NEW_AFTER = 60;

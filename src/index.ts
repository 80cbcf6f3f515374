/**
 * `agent-followup`: the library a backend service imports to start follow-ups, wait for them, read their progress,
 * manage recurring follow-ups and the per-project send budget. The worker that runs them is `agent-followup/worker`;
 * the agent API simulator for your own tests is `agent-followup/testing`.
 */
export * from './client';
export * from './schedules';
export * from './encryption';
export * from './notify/signature';

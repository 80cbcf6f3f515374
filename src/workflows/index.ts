// The workflow bundle's entry point: every export here is a workflow type the worker registers.
export { followUpWorkflow } from './follow-up';
export { projectCoordinatorWorkflow } from './project-coordinator';
export { budgetDefaultsWorkflow } from './budget-defaults';
export { checkAgentJobWorkflow } from './check-job';
export { jobWatcherWorkflow } from './job-watcher';
export { followUpNotifyWorkflow } from './notify';

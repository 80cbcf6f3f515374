// The workflow bundle's entry point: every export here is a workflow type the worker registers.
export { followUpWorkflow } from './follow-up/follow-up';
export { projectCoordinatorWorkflow } from './project-coordinator/project-coordinator';
export { budgetDefaultsWorkflow } from './budget-defaults/budget-defaults';
export { checkAgentJobWorkflow } from './check-job/check-job';
export { jobWatcherWorkflow } from './job-watcher/job-watcher';
export { followUpNotifyWorkflow } from './notify/notify';

// The workflow bundle's entry point: every export here is a workflow type the worker registers.
export { followUpWorkflow } from './follow-up/follow-up';
export { projectCoordinatorWorkflow } from '../coordinator/project-coordinator';
export { budgetDefaultsWorkflow } from '../coordinator/budget-defaults';
export { checkAgentJobWorkflow } from './check-job/check-job';
export { jobWatcherWorkflow } from '../watch/job-watcher';
export { followUpNotifyWorkflow } from './notify/notify';

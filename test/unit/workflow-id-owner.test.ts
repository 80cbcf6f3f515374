import {
  describeReservedWorkflowId,
  describeWorkflowIdInUse,
  identityOf,
  promptExcerpt,
  reservedWorkflowIdProblem,
  workflowIdMismatches,
  type ExistingWorkflow,
} from '../../src/workflows/follow-up/workflow-id-owner';

const FOLLOW_UP = 'followUpWorkflow';
const asked = { projectId: 'acme', jobId: 'job-1', prompt: 'Add tests' };
const followUp = (input: unknown): ExistingWorkflow => ({ workflowType: FOLLOW_UP, input });

describe('workflowIdMismatches', () => {
  test('is empty for a follow-up with the same project, job and prompt, whatever its options', () => {
    expect(
      workflowIdMismatches(
        asked,
        followUp({ ...asked, polling: { timeout: '1h' }, onAmbiguousSend: 'fail' }),
        FOLLOW_UP,
      ),
    ).toEqual([]);
  });

  test.each([
    [{ ...asked, projectId: 'other' }, ['projectId']],
    [{ ...asked, jobId: 'job-2' }, ['jobId']],
    [{ ...asked, prompt: 'Add more tests' }, ['prompt']],
    [{ projectId: 'other', jobId: 'job-2', prompt: 'Something else' }, ['projectId', 'jobId', 'prompt']],
  ])('names every field that differs from %j, in a fixed order', (existing, expected) => {
    expect(workflowIdMismatches(asked, followUp(existing), FOLLOW_UP)).toEqual(expected);
  });

  test('treats a prompt differing only in white space or case as another prompt', () => {
    expect(workflowIdMismatches(asked, followUp({ ...asked, prompt: 'Add tests ' }), FOLLOW_UP)).toEqual(['prompt']);
    expect(workflowIdMismatches(asked, followUp({ ...asked, prompt: 'add tests' }), FOLLOW_UP)).toEqual(['prompt']);
  });

  test('counts fields missing from a malformed input as different', () => {
    expect(workflowIdMismatches(asked, followUp(null), FOLLOW_UP)).toEqual(['projectId', 'jobId', 'prompt']);
    expect(
      workflowIdMismatches(asked, followUp({ projectId: 'acme', jobId: 7, prompt: 'Add tests' }), FOLLOW_UP),
    ).toEqual(['jobId']);
  });

  test('says only the type differs when the workflow is no follow-up, whatever its input', () => {
    expect(
      workflowIdMismatches(asked, { workflowType: 'projectCoordinatorWorkflow', input: asked }, FOLLOW_UP),
    ).toEqual(['workflowType']);
  });
});

describe('identityOf', () => {
  test('keeps the string fields of the identity and nothing else', () => {
    expect(identityOf({ projectId: 'p', jobId: 3, prompt: 'x', polling: {} })).toEqual({ projectId: 'p', prompt: 'x' });
    expect(identityOf('not an object')).toEqual({});
  });
});

describe('promptExcerpt', () => {
  test('quotes a short prompt as it is', () => {
    expect(promptExcerpt('Add tests')).toBe('"Add tests"');
  });

  test('cuts a long prompt to 40 characters with an ellipsis, and flattens its white space', () => {
    const excerpt = JSON.parse(promptExcerpt(`Please\n\n  rewrite ${'the whole module '.repeat(100)}`)) as string;
    expect(excerpt).toHaveLength(40);
    expect(excerpt).toMatch(/^Please rewrite the whole module the who.*…$/);
  });
});

describe('describeWorkflowIdInUse', () => {
  test('names both identities and what differs, says nothing was sent and how to fix it', () => {
    const existing = followUp({ projectId: 'a', jobId: 'b', prompt: 'Fix the flaky test' });
    const message = describeWorkflowIdInUse('X', { projectId: 'c', jobId: 'b', prompt: 'Add tests' }, existing, [
      'projectId',
      'prompt',
    ]);
    expect(message).toBe(
      `workflow id 'X' belongs to a follow-up to project 'a', job 'b' with prompt "Fix the flaky test"; you asked for ` +
        `project 'c', job 'b' with prompt "Add tests": the project and the prompt differ. Nothing was sent; the workflow ` +
        'under that id goes on. Pick another workflow id (--workflow-id), or leave it out to use the deterministic one.',
    );
  });

  test('says "differs" for one field and lists three with commas', () => {
    const existing = followUp({ projectId: 'a', jobId: 'b', prompt: 'p' });
    expect(describeWorkflowIdInUse('X', { ...asked, projectId: 'a', jobId: 'b' }, existing, ['prompt'])).toContain(
      ': the prompt differs.',
    );
    expect(describeWorkflowIdInUse('X', asked, existing, ['projectId', 'jobId', 'prompt'])).toContain(
      ': the project, the job and the prompt differ.',
    );
  });

  test('never prints a long prompt in full', () => {
    const long = `Secret plan: ${'x'.repeat(5_000)}`;
    const message = describeWorkflowIdInUse(
      'X',
      { ...asked, prompt: long },
      followUp({ ...asked, prompt: `${long}!` }),
      ['prompt'],
    );
    expect(message).not.toContain('x'.repeat(41));
    expect(message.length).toBeLessThan(500);
  });

  test('names the type of a workflow that is no follow-up', () => {
    const message = describeWorkflowIdInUse(
      'agent-followup-project/acme',
      asked,
      { workflowType: 'projectCoordinatorWorkflow', input: {} },
      ['workflowType'],
    );
    expect(message).toContain(
      "workflow id 'agent-followup-project/acme' belongs to a workflow of type 'projectCoordinatorWorkflow', not to a follow-up.",
    );
    expect(message).toContain('Nothing was sent');
  });
});

describe('reserved workflow ids', () => {
  test("the coordinators' space is reserved; everything else is not", () => {
    expect(reservedWorkflowIdProblem('agent-followup-project/acme')).toBe(
      "workflow id 'agent-followup-project/acme' is reserved: ids starting with 'agent-followup-project/' belong to the " +
        'project coordinators, never to a follow-up',
    );
    expect(reservedWorkflowIdProblem('agent-followup-project')).toBeUndefined();
    expect(reservedWorkflowIdProblem('followup/acme/job-1/0123456789abcdef')).toBeUndefined();
    expect(reservedWorkflowIdProblem('my-agent-followup-project/acme')).toBeUndefined();
  });

  test("the client's message says nothing was started and to pick another id", () => {
    expect(describeReservedWorkflowId('agent-followup-project/x')).toMatch(
      /^workflow id 'agent-followup-project\/x' is reserved: .*\. Nothing was started\. Pick another workflow id \(--workflow-id\)/,
    );
  });
});

import { compareSearchAttributes, searchAttributeFix } from '../../src/client/namespace-setup';

const KEYWORD = 2;
const TEXT = 1;

describe('compareSearchAttributes', () => {
  test('all five registered as Keyword: nothing to fix', () => {
    expect(
      compareSearchAttributes({
        AgentProjectId: KEYWORD,
        AgentJobId: KEYWORD,
        AgentJobStatus: KEYWORD,
        AgentPrLink: KEYWORD,
        AgentFollowUpOutcome: KEYWORD,
        Other: TEXT,
      }),
    ).toEqual([]);
  });

  test('names each missing attribute and each one of the wrong type', () => {
    expect(compareSearchAttributes({ AgentProjectId: KEYWORD, AgentJobId: TEXT })).toEqual([
      'AgentJobId is registered with another type than Keyword',
      'AgentJobStatus is not registered',
      'AgentPrLink is not registered',
      'AgentFollowUpOutcome is not registered',
    ]);
  });

  test('the fix names the setup command and the Cloud command', () => {
    const message = searchAttributeFix('prod', ['AgentJobStatus is not registered']);
    expect(message).toContain("Namespace 'prod'");
    expect(message).toContain('npx agent-followup setup');
    expect(message).toContain('tcld namespace search-attributes add');
  });
});

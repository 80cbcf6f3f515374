import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  FOLLOW_UP_LIST_COLUMNS,
  FOLLOW_UP_LIST_QUERY,
  columnsConsoleSnippet,
  columnsStorageValue,
  followUpListUrl,
} from '../../scripts/stack/web-ui-view';
import { FOLLOW_UP_SEARCH_ATTRIBUTES } from '../../src/kernel/search-attributes';

describe('the saved view of follow-ups in the Web UI', () => {
  test('has a column for every search attribute a follow-up carries', () => {
    for (const key of FOLLOW_UP_SEARCH_ATTRIBUTES) expect(FOLLOW_UP_LIST_COLUMNS).toContain(key.name);
  });

  test("the columns are stored per namespace, Status pinned, other namespaces' columns kept", () => {
    const stored = JSON.parse(columnsStorageValue('team-a', { other: [{ label: 'Status', pinned: true }] })) as Record<
      string,
      Array<{ label: string; pinned: boolean }>
    >;
    expect(stored.other).toEqual([{ label: 'Status', pinned: true }]);
    expect(stored['team-a']?.map((column) => column.label)).toEqual([...FOLLOW_UP_LIST_COLUMNS]);
    expect(stored['team-a']?.filter((column) => column.pinned).map((column) => column.label)).toEqual(['Status']);
  });

  test('the console snippet sets the same columns and keeps what is there', () => {
    const storage = new Map<string, string>([['namespace-workflow-table-columns', JSON.stringify({ other: [] })]]);
    const localStorage = {
      getItem: (key: string) => storage.get(key) ?? null,
      setItem: (key: string, value: string) => void storage.set(key, value),
    };
    new Function('localStorage', columnsConsoleSnippet('default'))(localStorage);
    expect(JSON.parse(storage.get('namespace-workflow-table-columns') as string)).toEqual(
      JSON.parse(columnsStorageValue('default', { other: [] })),
    );
  });

  test('the list address carries the query', () => {
    expect(followUpListUrl('http://localhost:8233/', 'default')).toBe(
      'http://localhost:8233/namespaces/default/workflows?query=WorkflowType%3D%22followUpWorkflow%22',
    );
  });
});

test('docs/WEB-UI.md gives the line this module writes, so the page stays true', () => {
  const page = readFileSync(join(__dirname, '..', '..', 'docs', 'WEB-UI.md'), 'utf8');
  expect(page).toContain(columnsConsoleSnippet('default'));
  expect(page).toContain(encodeURIComponent(FOLLOW_UP_LIST_QUERY));
});

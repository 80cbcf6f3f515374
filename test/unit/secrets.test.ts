import { apiKeySecrets, REDACTED, secretForms, secretRedactor } from '../../src/secrets';

/** A key with the two characters JSON escapes, and one that URL-encoding changes. */
const KEY = 'mint_ab"cd\\ef/gh+12';
const redact = secretRedactor(apiKeySecrets(KEY));

describe('secretRedactor', () => {
  test('every occurrence of every secret is replaced, the whole key and its secret part', () => {
    const key = 'mint_test_unit_key_0001';
    expect(secretRedactor(apiKeySecrets(key))(`key=${key} again ${key} part test_unit_key_0001`)).toBe(
      `key=${REDACTED} again ${REDACTED} part ${REDACTED}`,
    );
  });

  test.each([
    ['as written', KEY],
    ['JSON-escaped once', JSON.stringify(KEY).slice(1, -1)],
    ['JSON-escaped twice', JSON.stringify(JSON.stringify(KEY).slice(1, -1)).slice(1, -1)],
    ['URL-encoded', encodeURIComponent(KEY)],
    ['in base64', Buffer.from(KEY).toString('base64')],
    ['in base64url', Buffer.from(KEY).toString('base64url')],
  ])('the key %s is found and replaced', (_, form) => {
    expect(form.length).toBeGreaterThan(0);
    const text = `before ${form} after`;
    expect(redact(text)).toBe(`before ${REDACTED} after`);
  });

  test('a key echoed inside a JSON body inside a JSON log line is gone in every form', () => {
    const body = JSON.stringify({ error: `invalid key ${KEY}` });
    const line = JSON.stringify({ message: 'refused', body });
    const redacted = redact(line);
    for (const form of secretForms(apiKeySecrets(KEY))) expect(redacted).not.toContain(form);
    expect(redacted).toContain(REDACTED);
  });

  test('text without a secret is left alone', () => {
    expect(redact('nothing to hide')).toBe('nothing to hide');
  });

  test('secrets shorter than 4 characters are not redacted, so common words survive', () => {
    expect(secretRedactor(['the', ''])('the job is done')).toBe('the job is done');
    expect(secretRedactor(['abcd'])('abcd efgh')).toBe(`${REDACTED} efgh`);
  });
});

describe('apiKeySecrets', () => {
  test('the whole key and the secret after its prefix; nothing for no key', () => {
    expect(apiKeySecrets('mint_abcdefgh')).toEqual(['mint_abcdefgh', 'abcdefgh']);
    expect(apiKeySecrets('nounderscore')).toEqual(['nounderscore']);
    expect(apiKeySecrets(undefined)).toEqual([]);
  });
});

import {
  apiKeySecrets,
  REDACTED,
  scrubSecrets,
  secretDetector,
  secretForms,
  secretRedactor,
  WITHHELD,
} from '../../src/secrets';

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

describe('secretDetector and scrubSecrets: the key under any common transformation, without a list of forms', () => {
  const secrets = apiKeySecrets(KEY);
  const holds = secretDetector(secrets);
  const scrub = scrubSecrets(secrets);
  const echo = `Authorization: Bearer ${KEY}`;
  const bytes = (text: string) => Buffer.from(text, 'utf8');
  const percentAll = (text: string, lower = false) =>
    [...bytes(text)]
      .map((byte) => `%${byte.toString(16).padStart(2, '0')}`)
      .map((escape) => (lower ? escape : escape.toUpperCase()))
      .join('');

  // Each is a form an API or a proxy really produces; none is in secretForms' list except where said.
  test.each([
    [
      'JSON \\u escapes of every character',
      [...KEY].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
    ],
    ['JSON \\u0022-style escapes of the quote only', KEY.replace('"', '\\u0022')],
    ['lowercase percent-encoding', percentAll(KEY, true)],
    ['uppercase percent-encoding of every byte', percentAll(KEY)],
    ['double percent-encoding', encodeURIComponent(encodeURIComponent(KEY))],
    ['triple percent-encoding', encodeURIComponent(encodeURIComponent(encodeURIComponent(KEY)))],
    ['form encoding', new URLSearchParams({ auth: `Bearer ${KEY}` }).toString()],
    ['base64 of the echo (the key at offset 22, unaligned)', bytes(echo).toString('base64')],
    ['base64 of the echo at offset 1', bytes(`x${echo}`).toString('base64')],
    ['base64 of the echo at offset 2', bytes(`xy${echo}`).toString('base64')],
    ['base64url at offset 1', bytes(`x${echo}`).toString('base64url')],
    ['hex, lowercase', bytes(echo).toString('hex')],
    ['hex, uppercase', bytes(echo).toString('hex').toUpperCase()],
    ['HTML decimal entities', [...KEY].map((char) => `&#${char.charCodeAt(0)};`).join('')],
    ['HTML hex entities', [...KEY].map((char) => `&#x${char.charCodeAt(0).toString(16)};`).join('')],
    ['HTML named entities', KEY.replace('"', '&quot;').replace('/', '&sol;').replace('\\', '&bsol;')],
    ['JSON-escaped, then percent-encoded', encodeURIComponent(JSON.stringify({ error: echo }))],
    ['HTML entities inside a JSON string', JSON.stringify(KEY.replace('"', '&#34;'))],
    ['upper-cased', KEY.toUpperCase()],
    ['the secret part alone, percent-encoded in lowercase', percentAll(KEY.slice('mint_'.length), true)],
  ])('%s is found, and the key is gone from the scrubbed text', (_, form) => {
    const text = `{"error":"invalid credentials: ${form}"}`;
    expect(holds(text)).toBe(true);
    const scrubbed = scrub(text);
    // Redacted in place when one of the usual forms covers it, else withheld whole; either way, not found again.
    expect(scrubbed === WITHHELD || scrubbed.includes(REDACTED)).toBe(true);
    expect(holds(scrubbed)).toBe(false);
  });

  test('a form the redactor does not know is withheld whole', () => {
    expect(scrub(`echo: ${Buffer.from(echo).toString('hex')}`)).toBe(WITHHELD);
  });

  test('a plain echo is redacted in place and the rest of the message kept (not withheld)', () => {
    expect(scrub(`invalid key ${KEY} for project p`)).toBe(`invalid key ${REDACTED} for project p`);
  });

  test('ordinary text, other keys, and encodings of other text are left alone', () => {
    const other = 'mint_zz"yy\\xx/ww+99';
    for (const text of [
      'The agent API failed with HTTP 500 on get job',
      'https://github.com/acme/site/pull/9?ref=main&x=%2Fdocs%2F',
      bytes(`Authorization: Bearer ${other}`).toString('base64'),
      bytes(`Authorization: Bearer ${other}`).toString('hex'),
      encodeURIComponent(encodeURIComponent(other)),
      '&#34;&#92;&#47;&quot; \\u0022',
    ]) {
      expect({ text, holds: holds(text) }).toEqual({ text, holds: false });
      expect(scrub(text)).toBe(text);
    }
  });

  test('short secrets are only redacted, never detected, so decoded ordinary text is never withheld', () => {
    expect(secretDetector(['abcd'])('ABCD %61%62%63%64')).toBe(false);
  });
});

/**
 * The one place that knows how a secret can show up in text we write, and cuts it out. Used by the HTTP client (API
 * error bodies that echo the key, before they become failure messages in history) and by the log writer (every
 * line). A key may hold `"` or `\`, and an API or a log may carry it escaped, so each secret is looked for as
 * written, JSON-escaped once and twice (a JSON string inside a JSON string), URL-encoded, and in base64.
 */

/** What replaces a secret. */
export const REDACTED = '[REDACTED]';

/** Secrets shorter than this are not redacted: replacing them would shred ordinary words. */
const MIN_SECRET_LENGTH = 4;

/** The secrets in an API key: the whole key, and the secret after its prefix (an API may echo either). */
export function apiKeySecrets(apiKey: string | undefined): string[] {
  if (!apiKey) return [];
  const underscore = apiKey.indexOf('_');
  return underscore >= 0 ? [apiKey, apiKey.slice(underscore + 1)] : [apiKey];
}

/** Every form of each secret, longest first (so a whole key goes before its secret part could split it). */
export function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    const escapedOnce = JSON.stringify(secret).slice(1, -1);
    forms.add(secret);
    forms.add(escapedOnce);
    forms.add(JSON.stringify(escapedOnce).slice(1, -1));
    forms.add(encodeURIComponent(secret));
    forms.add(Buffer.from(secret, 'utf8').toString('base64'));
    forms.add(Buffer.from(secret, 'utf8').toString('base64url'));
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/** A function that replaces every form of every secret in a text with [REDACTED]. */
export function secretRedactor(secrets: readonly string[]): (text: string) => string {
  const forms = secretForms(secrets);
  return (text) => forms.reduce((out, form) => (out.includes(form) ? out.split(form).join(REDACTED) : out), text);
}

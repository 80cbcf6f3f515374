/** Text a test searches for what must not be there: JSON with every payload's base64 `data` decoded beside it. */
export function withPayloadsDecoded(json: string): string {
  const decoded: string[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== 'object') return;
    for (const [name, child] of Object.entries(value)) {
      if (name === 'data' && typeof child === 'string') decoded.push(Buffer.from(child, 'base64').toString('utf8'));
      else visit(child);
    }
  };
  visit(JSON.parse(json));
  return [json, ...decoded].join('\n');
}

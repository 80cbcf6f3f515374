/**
 * Writes docs/json/*.schema.json from the CLI's output schemas (src/command-line/json-output.ts). A unit test fails
 * when the committed files differ from what this writes, so run it after changing a schema: npm run json-schemas.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonSchemas } from '../../src/command-line/json-output';

const dir = join(__dirname, '..', '..', '..', 'docs', 'json');
mkdirSync(dir, { recursive: true });
for (const [name, schema] of Object.entries(jsonSchemas())) {
  writeFileSync(join(dir, name), `${JSON.stringify(schema, null, 2)}\n`);
  console.log(`wrote docs/json/${name}`);
}

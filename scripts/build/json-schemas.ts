/**
 * Writes docs/json/*.schema.json from the CLI's output schemas (src/command-line/json-output.ts), and
 * docs/json/workflow/*.schema.json from the workflow's contract for other languages (src/client/workflow-contract.ts).
 * A unit test fails when the committed files differ from what this writes, so run it after changing a schema:
 * npm run json-schemas.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonSchemas } from '../../src/command-line/json-output';
import { workflowContractSchemas } from '../../src/client/workflow-contract';

const docs = join(__dirname, '..', '..', '..', 'docs');
for (const [folder, schemas] of [
  ['json', jsonSchemas()],
  ['json/workflow', workflowContractSchemas()],
] as const) {
  mkdirSync(join(docs, folder), { recursive: true });
  for (const [name, schema] of Object.entries(schemas)) {
    writeFileSync(join(docs, folder, name), `${JSON.stringify(schema, null, 2)}\n`);
    console.log(`wrote docs/${folder}/${name}`);
  }
}

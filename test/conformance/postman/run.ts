// Runs Microsoft's SCIM Postman collection (MIT, beside this file: see its README) with newman's
// Node API against a live scimd, and reports every failed assertion as "request name :: assertion
// name".
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import newman from 'newman';

const COLLECTION_PATH = resolve(import.meta.dirname, 'AzureAD-SCIMReferenceCode.PostmanCollection.json');

interface Item {
  name: string;
  item?: Item[];
}

export interface PostmanResult {
  requests: number;
  assertions: number;
  failed: string[];
}

export async function runCollection(origin: string, apiPath: string, token: string): Promise<PostmanResult> {
  const collection = JSON.parse(readFileSync(COLLECTION_PATH, 'utf8')) as { item: Item[] };
  // The "Get Token" folder asks a /Token endpoint of Microsoft's reference server for a token; the
  // token is given directly instead.
  collection.item = collection.item.filter((i) => i.name !== 'Get Token');
  const url = new URL(origin);
  const summary = await new Promise<newman.NewmanRunSummary>((done, fail) => {
    newman.run(
      {
        collection: collection as never,
        envVar: [
          { key: 'Protocol', value: url.protocol.replace(':', '') },
          { key: 'Server', value: url.hostname },
          { key: 'Port', value: `:${url.port}` },
          { key: 'Api', value: apiPath.replace(/^\//, '') },
          { key: 'token', value: token },
        ],
        reporters: [],
        timeoutRequest: 10_000,
      },
      (error, result) => (error ? fail(error) : done(result)),
    );
  });
  const failed: string[] = [];
  let assertions = 0;
  for (const execution of summary.run.executions) {
    for (const assertion of execution.assertions ?? []) {
      assertions++;
      if (assertion.error) failed.push(`${execution.item.name} :: ${assertion.assertion}`);
    }
  }
  return { requests: summary.run.executions.length, assertions, failed };
}

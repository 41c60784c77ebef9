// Validates Gateway API objects (one JSON document a line on stdin)
// against the Gateway API's schemas as the npm package
// @kubernetes-models/gateway-api packages them: types, enums, patterns and
// required fields. Usage: node gateway-api.mjs PREFIX, where PREFIX is the
// folder `npm install --prefix PREFIX @kubernetes-models/gateway-api`
// installed into. Prints each failure and exits 1 on any.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const prefix = process.argv[2];
const models = join(prefix, "node_modules/@kubernetes-models/gateway-api");
const modelOf = async (apiVersion, kind) => {
  const [group, version] = apiVersion.split("/");
  const file = join(models, group, version, `${kind}.js`);
  return (await import(pathToFileURL(file)))[kind];
};

let failed = 0;
let checked = 0;
for (const line of readFileSync(0, "utf8").split("\n").filter(Boolean)) {
  const object = JSON.parse(line);
  const name = `${object.kind} ${object.metadata?.name}`;
  let Model;
  try {
    Model = await modelOf(object.apiVersion, object.kind);
  } catch (error) {
    console.log(`${name}: no schema for ${object.apiVersion} ${object.kind}`);
    failed += 1;
    continue;
  }
  try {
    new Model(object).validate();
    checked += 1;
  } catch (error) {
    console.log(`${name}: ${error.message}`);
    failed += 1;
  }
}
console.log(`gateway-api: ${checked} valid, ${failed} invalid`);
process.exit(failed ? 1 : 0);

// Validates objects of a custom API (one JSON document a line on stdin)
// against that API's schemas as a @kubernetes-models npm package packages
// them: types, enums, patterns and required fields. Usage:
// node models.mjs PREFIX PACKAGE, where PREFIX is the folder
// `npm install --prefix PREFIX @kubernetes-models/PACKAGE` installed into
// (gateway-api: the Gateway API's; cloudnative-pg: CloudNativePG's, made
// from the operator's own API types). Prints each failure and exits 1 on any.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [prefix, name] = process.argv.slice(2);
const models = join(prefix, "node_modules/@kubernetes-models", name);
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
console.log(`${name}: ${checked} valid, ${failed} invalid`);
process.exit(failed ? 1 : 0);

// Checks answers of weir's REST API against Flink's OpenAPI description
// of it (rest_v1_dispatcher.yml) with ajv, a JSON-schema validator.
//
//   node validate.js SPEC ADJUSTMENTS ANSWERS   validate answers
//   node validate.js SPEC --operations          list the spec's operations
//
// ANSWERS is a JSON array of {method, path, status, body}: real answers of
// a real cluster (tests/integration/rest_contract_test.cpp records them).
// Each is checked against the schema the spec gives for its operation and
// status. Stricter than the spec alone: Flink's server sends every field
// of its response classes, so every property the spec declares must be
// present (JSON schema alone lets any be missing), except those
// ADJUSTMENTS lists as optional; and ADJUSTMENTS replaces the schemas the
// spec gets wrong with what Flink's server sends. Each adjustment carries
// its reason, and docs/operations.md § REST API lists them.
//
// Prints one line per failure and exits 1, or prints "N answers valid".
'use strict';

const fs = require('fs');
const yaml = require('js-yaml');
const Ajv = require('ajv');

function operations(spec) {
  const ops = [];
  for (const [path, item] of Object.entries(spec.paths))
    for (const method of Object.keys(item))
      ops.push({method: method.toUpperCase(), path});
  return ops;
}

// The template of `ops` that `path` (without its query) instantiates, a
// literal segment winning over a parameter (/jobs/overview, not
// /jobs/{jobid}).
function match(ops, method, path) {
  const segs = path.split('?')[0].split('/');
  let best = null, bestParams = Infinity;
  for (const op of ops) {
    if (op.method !== method) continue;
    const t = op.path.split('/');
    if (t.length !== segs.length) continue;
    let params = 0, ok = true;
    for (let i = 0; i < t.length && ok; ++i) {
      if (t[i].startsWith('{')) ++params;
      else ok = t[i] === segs[i];
    }
    if (ok && params < bestParams) { best = op; bestParams = params; }
  }
  return best;
}

// Every property of an object schema is required, but those `optional`
// names ('*': all). Nested inline schemas (allOf parts, properties, items)
// are the same component's.
function requireAll(schema, optional) {
  if (!schema || typeof schema !== 'object' || schema.$ref) return;
  if (schema.properties && !('*' in optional)) {
    const all = Object.keys(schema.properties).filter(p => !(p in optional));
    schema.required = [...new Set([...(schema.required || []), ...all])];
  }
  for (const part of schema.allOf || []) requireAll(part, optional);
  for (const sub of Object.values(schema.properties || {}))
    requireAll(sub, optional);
  if (schema.items) requireAll(schema.items, optional);
}

function strictSpec(spec, adjustments) {
  const schemas = spec.components.schemas;
  for (const [name, {schema}] of Object.entries(adjustments.replace || {})) {
    if (!(name in schemas)) throw new Error(`no schema ${name} to replace`);
    schemas[name] = schema;
  }
  for (const name of Object.keys(adjustments.optional || {}))
    if (!(name in schemas)) throw new Error(`no schema ${name} for optional`);
  for (const [name, schema] of Object.entries(schemas))
    requireAll(schema, (adjustments.optional || {})[name] || {});
  return spec;
}

function validator(spec) {
  const ajv = new Ajv({allErrors: true, validateSchema: false,
                       unknownFormats: 'ignore', jsonPointers: true});
  const inRange = (lo, hi) => ({type: 'number',
                                validate: x => Number.isInteger(x) && x >= lo && x <= hi});
  ajv.addFormat('int32', inRange(-(2 ** 31), 2 ** 31 - 1));
  ajv.addFormat('int64', inRange(-(2 ** 63), 2 ** 63));
  ajv.addFormat('double', {type: 'number', validate: x => Number.isFinite(x)});
  // Base64 text (Flink's serialized values and exceptions).
  const base64 = {type: 'string', validate: x => /^[A-Za-z0-9+/]*={0,2}$/.test(x)};
  ajv.addFormat('byte', base64);
  ajv.addFormat('binary', base64);
  ajv.addSchema(spec, 'spec.json');
  return ajv;
}

function pointer(...parts) {
  return parts.map(p => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

function main(argv) {
  const spec = yaml.load(fs.readFileSync(argv[0], 'utf8'));
  if (argv[1] === '--operations') {
    for (const op of operations(spec)) console.log(`${op.method} ${op.path}`);
    return 0;
  }
  const adjustments = JSON.parse(fs.readFileSync(argv[1], 'utf8'));
  const answers = JSON.parse(fs.readFileSync(argv[2], 'utf8'));
  const ops = operations(spec);
  const ajv = validator(strictSpec(spec, adjustments));
  let failures = 0;
  const fail = (a, why) => { ++failures; console.log(`${a.method} ${a.path}: ${why}`); };
  for (const a of answers) {
    const op = match(ops, a.method, a.path);
    if (!op) { fail(a, 'no such operation in the spec'); continue; }
    const responses = spec.paths[op.path][op.method.toLowerCase()].responses;
    const response = responses[String(a.status)];
    if (!response) {
      fail(a, `status ${a.status}, the spec answers ${Object.keys(responses).join(', ')}`);
      continue;
    }
    const content = response.content && response.content['application/json'];
    if (!content) continue; // the spec gives no body: any body does
    const ref = '#/' + pointer('paths', op.path, op.method.toLowerCase(),
                               'responses', String(a.status), 'content',
                               'application/json', 'schema');
    const validate = ajv.compile({$ref: 'spec.json' + ref});
    if (!validate(a.body))
      for (const e of validate.errors)
        fail(a, `${e.dataPath || '(body)'} ${e.message}`
                + (e.params && e.params.allowedValues
                   ? ` (${e.params.allowedValues.join(', ')})` : ''));
  }
  if (failures === 0) console.log(`${answers.length} answers valid`);
  return failures === 0 ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));

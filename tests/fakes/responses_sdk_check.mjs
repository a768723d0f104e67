#!/usr/bin/env node
// Drives tests/fakes/fake_responses.py with the official `openai` npm package
// (client.responses.create({stream: true}) and client.responses.stream()), so
// the fake is checked against the SDK's own stream parser and accumulator,
// not against our reading of the protocol. Prints one "ok"/"FAIL" line per
// check and ends with "N passed, M failed"; exits non-zero on any failure.
//
// Usage: node tests/fakes/responses_sdk_check.mjs --sdk DIR
//   DIR holds node_modules/openai (e.g. after `npm install --prefix DIR openai`).
//   --fake PATH (default: fake_responses.py next to this file), --python PATH
//   (default /usr/bin/python3), KEEP=1 keeps the temporary directory.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const opt = (name, def) => {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
};
const SDK = opt('--sdk', process.env.OPENAI_SDK_DIR);
const FAKE = opt('--fake', path.join(HERE, 'fake_responses.py'));
const PY = opt('--python', '/usr/bin/python3');
if (!SDK) {
  console.error('responses_sdk_check: --sdk DIR (a directory with node_modules/openai) is required');
  process.exit(2);
}
const sdkEntry = path.join(SDK, 'node_modules', 'openai', 'index.mjs');
const sdkPkg = JSON.parse(fs.readFileSync(path.join(SDK, 'node_modules', 'openai', 'package.json')));
const sdk = await import(pathToFileURL(sdkEntry).href);
const OpenAI = sdk.default;
console.log(`# openai ${sdkPkg.version} from ${SDK}`);

const T = fs.mkdtempSync(path.join(os.tmpdir(), 'responses-sdk-'));
if (process.env.KEEP) console.log(`# temp dir: ${T}`);
const servers = [];
let passed = 0;
let failed = 0;

function ok(name) {
  passed++;
  console.log(`ok   ${name}`);
}
function ko(name, detail) {
  failed++;
  console.log(`FAIL ${name}${detail ? ` -- ${detail}` : ''}`);
}
function check(name, cond, detail) {
  if (cond) ok(name);
  else ko(name, typeof detail === 'function' ? detail() : detail);
  return !!cond;
}
const eq = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const show = (x) => JSON.stringify(x)?.slice(0, 400);

// startFake NAME SCRIPT ARGS: a fake on port 0; resolves when its port file appears
async function startFake(name, script, args = []) {
  const sp = path.join(T, `${name}.script.json`);
  const pf = path.join(T, `${name}.port`);
  const log = path.join(T, `${name}.log`);
  fs.writeFileSync(sp, JSON.stringify(script));
  const err = fs.openSync(path.join(T, `${name}.err`), 'w');
  const child = spawn(PY, [FAKE, '--script', sp, '--port', '0', '--port-file', pf, '--log', log,
    '--seed', '11', ...args], { stdio: ['ignore', 'ignore', err] });
  servers.push(child);
  for (let i = 0; i < 200 && !fs.existsSync(pf); i++) await new Promise((r) => setTimeout(r, 25));
  if (!fs.existsSync(pf)) {
    throw new Error(`fake ${name} did not start: ${fs.readFileSync(path.join(T, `${name}.err`), 'utf8')}`);
  }
  const port = fs.readFileSync(pf, 'utf8').trim();
  return {
    url: `http://127.0.0.1:${port}/v1`,
    log: () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').filter(Boolean)
      .map((l) => JSON.parse(l)) : []),
    client: (extra = {}) => new OpenAI({ apiKey: 'sk-test-key-1234', baseURL: `http://127.0.0.1:${port}/v1`,
      maxRetries: 0, ...extra }),
  };
}

// collect STREAM: every event of a create({stream: true}) stream; the error if iteration threw
async function collect(stream) {
  const events = [];
  try {
    for await (const ev of stream) events.push(ev);
    return { events, error: null };
  } catch (e) {
    return { events, error: e };
  }
}

// expectError NAME FN WANT: FN rejects with an SDK APIError matching WANT
async function expectError(name, fn, want) {
  let err = null;
  try {
    const r = await fn();
    if (r && typeof r[Symbol.asyncIterator] === 'function') for await (const _ of r) { /* drain */ }
  } catch (e) {
    err = e;
  }
  if (!err) return ko(name, 'no error');
  const probs = [];
  if (want.cls && !(err instanceof want.cls)) probs.push(`class ${err.constructor.name}`);
  if (want.status !== undefined && err.status !== want.status) probs.push(`status ${err.status}`);
  if (want.code !== undefined && err.code !== want.code) probs.push(`code ${err.code}`);
  if (want.param !== undefined && err.param !== want.param) probs.push(`param ${err.param}`);
  if (want.type !== undefined && err.type !== want.type) probs.push(`type ${err.type}`);
  if (want.words && !String(err.message).includes(want.words)) probs.push(`message ${err.message}`);
  return check(name, probs.length === 0, () => probs.join('; '));
}

const B2_EVENTS = new Set(['response.created', 'response.in_progress', 'response.output_item.added',
  'response.output_item.done', 'response.content_part.added', 'response.content_part.done',
  'response.output_text.delta', 'response.output_text.done', 'response.function_call_arguments.delta',
  'response.function_call_arguments.done', 'response.reasoning_summary_part.added',
  'response.reasoning_summary_part.done', 'response.reasoning_summary_text.delta',
  'response.reasoning_summary_text.done', 'response.completed', 'response.incomplete']);

const TEXT0 = 'Let me look at the data: café ✓ 🚀 — ünïcode.';
const SUMMARY0 = 'I should list the files first, then run the script.';
const ARGS0 = { command: 'ls -la input' };
const ARGS1 = { code: "print('héllo wörld')" };
const SCRIPT = {
  turns: [
    { text: TEXT0, reasoning: SUMMARY0,
      tool_calls: [{ name: 'shell', arguments: ARGS0 }, { name: 'python', arguments: ARGS1 }],
      usage: { input_tokens: 1200, cached_tokens: 1024, output_tokens: 150, reasoning_tokens: 64 } },
    { text: 'Done: the report is in output/report.md.' },
    { text: 'This answer was cut sh', finish_reason: 'length' },
  ],
};
const TOOLS = [
  { type: 'function', name: 'shell', description: 'Run a shell command',
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'],
      additionalProperties: false }, strict: true },
  { type: 'function', name: 'python', description: 'Run Python code',
    parameters: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] } },
];
const USER = { role: 'user', content: [{ type: 'input_text', text: 'Find unusual energy use.' }] };
const BASE = { model: 'gpt-5', instructions: 'You are an analyst.', tools: TOOLS, store: false,
  include: ['reasoning.encrypted_content'], reasoning: { effort: 'low', summary: 'auto' },
  max_output_tokens: 4096 };

async function main() {
  const fake = await startFake('main', SCRIPT);
  const client = fake.client();

  // ---- 1. create({stream: true}): the raw events
  const s1 = await collect(await client.responses.create({ ...BASE, input: [USER], stream: true }));
  check('stream 1 iterates without an SDK error', !s1.error, () => String(s1.error));
  const ev = s1.events;
  const types = ev.map((e) => e.type);
  check('sequence_number runs 0,1,2,... over every event', ev.every((e, i) => e.sequence_number === i),
    () => show(ev.map((e) => e.sequence_number)));
  check('stream opens with response.created then response.in_progress',
    types[0] === 'response.created' && types[1] === 'response.in_progress', () => show(types.slice(0, 3)));
  check('stream ends with response.completed', types.at(-1) === 'response.completed', () => types.at(-1));
  check('every event type is one of B.2 (and the reasoning summary/content part events)',
    types.every((t) => B2_EVENTS.has(t)), () => show(types.filter((t) => !B2_EVENTS.has(t))));
  check('created carries response.id resp_... with status in_progress',
    /^resp_[0-9a-f]{40,}$/.test(ev[0].response.id) && ev[0].response.status === 'in_progress',
    () => show(ev[0].response));
  const added = ev.filter((e) => e.type === 'response.output_item.added');
  check('output items in order: reasoning, message, function_call, function_call',
    eq(added.map((e) => e.item.type), ['reasoning', 'message', 'function_call', 'function_call']) &&
    added.every((e, i) => e.output_index === i), () => show(added.map((e) => e.item.type)));
  const fcAdded = added.filter((e) => e.item.type === 'function_call');
  check('function_call added with fc_ id, call_ id, name and arguments ""',
    fcAdded.every((e) => /^fc_[0-9a-f]{40,}$/.test(e.item.id) && /^call_[A-Za-z0-9]{24}$/.test(e.item.call_id) &&
      e.item.arguments === '' && e.item.status === 'in_progress') &&
    eq(fcAdded.map((e) => e.item.name), ['shell', 'python']), () => show(fcAdded));
  const argsBy = {};
  for (const e of ev.filter((x) => x.type === 'response.function_call_arguments.delta')) {
    argsBy[e.item_id] = (argsBy[e.item_id] ?? '') + e.delta;
  }
  const argDeltaCount = fcAdded.map((a) => ev.filter((e) => e.type === 'response.function_call_arguments.delta'
    && e.item_id === a.item.id).length);
  check('each call streams its arguments in 2+ deltas named by item_id', argDeltaCount.every((n) => n >= 2),
    () => show(argDeltaCount));
  const argsDone = ev.filter((e) => e.type === 'response.function_call_arguments.done');
  check('arguments.done carries name and the full arguments, equal to the joined deltas',
    argsDone.length === 2 && argsDone.every((d) => d.arguments === argsBy[d.item_id] &&
      d.name === fcAdded.find((a) => a.item.id === d.item_id)?.item.name), () => show(argsDone));
  check('rebuilt arguments parse to the scripted ones',
    eq(fcAdded.map((a) => JSON.parse(argsBy[a.item.id])), [ARGS0, ARGS1]), () => show(argsBy));
  const textDeltas = ev.filter((e) => e.type === 'response.output_text.delta');
  const textDone = ev.find((e) => e.type === 'response.output_text.done');
  check('output_text deltas (split inside UTF-8 on the wire) join to the scripted text',
    textDeltas.length > 2 && textDeltas.map((e) => e.delta).join('') === TEXT0 && textDone?.text === TEXT0,
    () => show(textDeltas.map((e) => e.delta).join('')));
  check('text deltas carry item_id, content_index 0, logprobs [] and obfuscation',
    textDeltas.every((e) => e.item_id.startsWith('msg_') && e.content_index === 0 && eq(e.logprobs, []) &&
      typeof e.obfuscation === 'string'), () => show(textDeltas[0]));
  const summ = ev.filter((e) => e.type === 'response.reasoning_summary_text.delta');
  check('reasoning_summary_text deltas join to the summary (reasoning.summary asked)',
    summ.length > 1 && summ.map((e) => e.delta).join('') === SUMMARY0 && summ.every((e) => e.summary_index === 0),
    () => show(summ));
  const done = ev.filter((e) => e.type === 'response.output_item.done');
  const rsDone = done.find((e) => e.item.type === 'reasoning');
  check('reasoning output_item.done carries encrypted_content (store:false + include)',
    typeof rsDone?.item.encrypted_content === 'string' && rsDone.item.encrypted_content.startsWith('gAAAA') &&
    eq(rsDone.item.summary, [{ type: 'summary_text', text: SUMMARY0 }]), () => show(rsDone));
  const final = ev.at(-1).response;
  check('completed response: status completed, 4 output items equal to the output_item.done items',
    final.status === 'completed' && eq(final.output, done.map((d) => d.item)), () => show(final.output));
  check('usage: input 1200 (cached 1024), output 150 (reasoning 64), total 1350',
    final.usage?.input_tokens === 1200 && final.usage.input_tokens_details?.cached_tokens === 1024 &&
    final.usage.output_tokens === 150 && final.usage.output_tokens_details?.reasoning_tokens === 64 &&
    final.usage.total_tokens === 1350, () => show(final.usage));
  check('the response echoes store:false, the strict tool as strict and the instructions',
    final.store === false && final.tools[0].strict === true && final.tools[1].strict === false &&
    final.instructions === 'You are an analyst.', () => show([final.store, final.tools, final.instructions]));

  // ---- 2. responses.stream(): the SDK's accumulator over the same turn
  const textSnaps = [];
  const argSnaps = [];
  let finalResp = null;
  let helperErr = null;
  try {
    const rs = client.responses.stream({ ...BASE, input: [USER] });
    rs.on('response.output_text.delta', (e) => textSnaps.push(e.snapshot));
    rs.on('response.function_call_arguments.delta', (e) => argSnaps.push(e.snapshot));
    finalResp = await rs.finalResponse();
  } catch (e) {
    helperErr = e;
  }
  check('responses.stream() accumulates the stream without error', !helperErr && finalResp,
    () => String(helperErr));
  if (finalResp) {
    check('stream helper: output_text equals the scripted text', finalResp.output_text === TEXT0,
      () => show(finalResp.output_text));
    check('stream helper: text snapshots grow to the full text', textSnaps.at(-1) === TEXT0 &&
      textSnaps.every((s, i) => i === 0 || s.startsWith(textSnaps[i - 1])), () => show(textSnaps));
    check('stream helper: argument snapshots are prefixes of the final arguments',
      argSnaps.length >= 4 && argSnaps.every((s) => [JSON.stringify(ARGS0), JSON.stringify(ARGS1)]
        .some((a) => a.startsWith(s))), () => show(argSnaps));
    check('stream helper: final function calls parse to the scripted arguments',
      eq(finalResp.output.filter((o) => o.type === 'function_call').map((o) => JSON.parse(o.arguments)),
        [ARGS0, ARGS1]), () => show(finalResp.output));
  }

  // ---- 3. the round trip, stateless: history + output items + function_call_output
  const calls = final.output.filter((o) => o.type === 'function_call');
  const outputs = calls.map((c, i) => ({ type: 'function_call_output', call_id: c.call_id, output: `result ${i}` }));
  const history = [USER, ...final.output, ...outputs];
  const s3 = await collect(await client.responses.create({ ...BASE, input: history, stream: true }));
  const t3 = s3.events.find((e) => e.type === 'response.output_text.done');
  check('round trip: output items sent back unchanged + function_call_output -> turn 1',
    !s3.error && t3?.text === SCRIPT.turns[1].text, () => String(s3.error ?? show(t3)));
  check('round trip: the fake logged turn_index 1', fake.log().at(-1)?.turn_index === 1,
    () => show(fake.log().at(-1)));
  // plain call_id/name/arguments items (no item ids) with the reasoning item are accepted too
  const bare = [USER, final.output[0], { role: 'assistant', content: TEXT0 },
    ...calls.map((c) => ({ type: 'function_call', call_id: c.call_id, name: c.name, arguments: c.arguments })),
    ...outputs];
  const s3b = await collect(await client.responses.create({ ...BASE, input: bare, stream: true }));
  check('round trip with bare items (no ids, assistant text as a string) -> turn 1',
    !s3b.error && s3b.events.at(-1)?.type === 'response.completed' &&
    s3b.events.find((e) => e.type === 'response.output_text.done')?.text === SCRIPT.turns[1].text,
    () => String(s3b.error));

  // ---- 4. what the real API refuses
  const tamper = (tok) => tok.slice(0, 20) + (tok[20] === 'A' ? 'B' : 'A') + tok.slice(21);
  const withRs = (rs) => [USER, rs, ...final.output.slice(1), ...outputs];
  await expectError('400 encrypted_content altered -> invalid_encrypted_content',
    () => client.responses.create({ ...BASE, input: withRs({ ...final.output[0],
      encrypted_content: tamper(final.output[0].encrypted_content) }) }),
    { cls: OpenAI.BadRequestError, status: 400, code: 'invalid_encrypted_content', words: 'could not be verified' });
  await expectError('400 reasoning summary changed -> invalid_encrypted_content',
    () => client.responses.create({ ...BASE, input: withRs({ ...final.output[0],
      summary: [{ type: 'summary_text', text: 'something else' }] }) }),
    { status: 400, code: 'invalid_encrypted_content' });
  await expectError('400 function_call sent back without its reasoning item',
    () => client.responses.create({ ...BASE, input: [USER, ...final.output.slice(1), ...outputs] }),
    { status: 400, param: 'input', code: null, words: "without its required 'reasoning' item" });
  await expectError('400 reasoning item without its following item',
    () => client.responses.create({ ...BASE, input: [USER, final.output[0], USER] }),
    { status: 400, param: 'input', words: 'without its required following item' });
  await expectError('400 function_call_output with no function_call',
    () => client.responses.create({ ...BASE, input: [USER, { type: 'function_call_output', call_id: 'call_nope', output: 'x' }] }),
    { status: 400, param: 'input', words: 'No tool call found for function call output with call_id call_nope' });
  await expectError('400 function_call left unanswered',
    () => client.responses.create({ ...BASE, input: [USER, ...final.output, outputs[0]] }),
    { status: 400, param: 'input', words: `No tool output found for function call ${calls[1].call_id}` });
  await expectError('400 function_call answered after the next user message',
    () => client.responses.create({ ...BASE, input: [USER, ...final.output, USER, ...outputs] }),
    { status: 400, words: 'No tool output found for function call' });
  await expectError('400 Chat Completions tool shape {function:{...}} -> tools[0].name missing',
    () => client.responses.create({ ...BASE, input: [USER], tools: [{ type: 'function',
      function: { name: 'shell', parameters: { type: 'object', properties: {} } } }] }),
    { status: 400, param: 'tools[0].name', code: 'missing_required_parameter' });
  await expectError('400 max_tokens is an unknown parameter here',
    () => client.responses.create({ ...BASE, input: [USER], max_tokens: 100 }),
    { status: 400, param: 'max_tokens', code: 'unknown_parameter', words: "Unknown parameter: 'max_tokens'." });
  await expectError('400 max_output_tokens below 16',
    () => client.responses.create({ ...BASE, input: [USER], max_output_tokens: 10 }),
    { status: 400, param: 'max_output_tokens', code: 'integer_below_min_value' });
  await expectError('400 previous_response_id of a store:false response -> previous_response_not_found',
    () => client.responses.create({ ...BASE, input: outputs, previous_response_id: final.id }),
    { status: 400, param: 'previous_response_id', code: 'previous_response_not_found' });
  await expectError('404 reasoning item by id only, store:false -> not persisted',
    () => client.responses.create({ ...BASE, input: withRs({ id: final.output[0].id, type: 'reasoning', summary: [] }) }),
    { cls: OpenAI.NotFoundError, status: 404, words: 'Items are not persisted when `store` is set to false' });
  await expectError('400 strict tool whose schema is not strict',
    () => client.responses.create({ ...BASE, input: [USER], tools: [{ type: 'function', name: 'shell', strict: true,
      parameters: { type: 'object', properties: { command: { type: 'string' } } } }] }),
    { status: 400, param: 'tools[0].parameters', code: 'invalid_function_parameters' });
  await expectError('400 Chat Completions tool_choice shape',
    () => client.responses.create({ ...BASE, input: [USER], tool_choice: { type: 'function', function: { name: 'shell' } } }),
    { status: 400, param: 'tool_choice.name', code: 'missing_required_parameter' });
  await expectError('400 temperature with a reasoning model',
    () => client.responses.create({ ...BASE, input: [USER], temperature: 0.2 }),
    { status: 400, param: 'temperature', code: 'unsupported_parameter' });
  await expectError('400 reasoning.effort with a non-reasoning model',
    () => client.responses.create({ ...BASE, model: 'gpt-4.1', input: [USER] }),
    { status: 400, param: 'reasoning.effort', code: 'unsupported_parameter' });
  await expectError("400 Chat Completions content part {type:'text'}",
    () => client.responses.create({ ...BASE, input: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] }),
    { status: 400, param: 'input[0].content[0].type', code: 'invalid_value' });
  await expectError('400 assistant content part input_text',
    () => client.responses.create({ ...BASE, input: [USER, { role: 'assistant', content: [{ type: 'input_text', text: 'a' }] }, USER] }),
    { status: 400, param: 'input[1].content[0]', code: 'invalid_value', words: "'output_text' and 'refusal'" });
  await expectError('400 function_call arguments as an object',
    () => client.responses.create({ ...BASE, input: [USER, { ...calls[0], arguments: ARGS0 }, outputs[0]] }),
    { status: 400, param: 'input[1].arguments', code: 'invalid_type' });
  await expectError('400 tool role (Chat Completions) in input',
    () => client.responses.create({ ...BASE, input: [USER, { role: 'tool', content: 'x' }] }),
    { status: 400, param: 'input[1].role', code: 'invalid_value' });
  await expectError('400 missing input',
    () => client.responses.create({ model: 'gpt-5' }),
    { status: 400, param: 'input', code: 'missing_required_parameter' });

  // ---- 5. stored responses: previous_response_id
  const p1 = await collect(await client.responses.create({ ...BASE, store: true, include: undefined, input: [USER], stream: true }));
  const r1 = p1.events.at(-1)?.response;
  check('store:true response completes (no encrypted_content without include)', r1?.status === 'completed' &&
    r1.store === true && r1.output[0].encrypted_content === undefined, () => show(r1?.output?.[0]));
  const chainOut = r1.output.filter((o) => o.type === 'function_call')
    .map((c) => ({ type: 'function_call_output', call_id: c.call_id, output: 'ok' }));
  const p2 = await collect(await client.responses.create({ ...BASE, store: true, include: undefined,
    previous_response_id: r1.id, input: chainOut, stream: true }));
  const r2 = p2.events.at(-1)?.response;
  check('previous_response_id + only the function_call_outputs -> turn 1, previous_response_id echoed',
    !p2.error && r2?.output?.[0]?.content?.[0]?.text === SCRIPT.turns[1].text &&
    r2.previous_response_id === r1.id, () => String(p2.error ?? show(r2)));
  await expectError('400 previous_response_id without the outputs its calls need',
    () => client.responses.create({ ...BASE, store: true, previous_response_id: r1.id, input: [USER] }),
    { status: 400, words: 'No tool output found for function call' });
  const p3 = await collect(await client.responses.create({ ...BASE, store: true, include: undefined, stream: true,
    input: [USER, { id: r1.output[0].id, type: 'reasoning', summary: r1.output[0].summary }, ...r1.output.slice(1), ...chainOut] }));
  check('store:true: a stored reasoning item sent back by id (no encrypted_content) is accepted',
    !p3.error && p3.events.at(-1)?.type === 'response.completed', () => String(p3.error));

  // ---- 6. incomplete (finish_reason length) and the non-streaming answer
  const two = [USER, { role: 'assistant', content: 'a' }, USER, { role: 'assistant', content: 'b' }, USER];
  const s6 = await collect(await client.responses.create({ ...BASE, input: two, stream: true }));
  const r6 = s6.events.at(-1);
  check('a "length" turn ends with response.incomplete, reason max_output_tokens',
    r6?.type === 'response.incomplete' && r6.response.status === 'incomplete' &&
    r6.response.incomplete_details?.reason === 'max_output_tokens' && r6.response.output.at(-1).status === 'incomplete',
    () => show(r6));
  const plain = await client.responses.create({ ...BASE, input: [USER] });
  check('non-streaming create returns the completed Response (SDK output_text)',
    plain.status === 'completed' && plain.output_text === TEXT0 && plain.output.length === 4, () => show(plain));
  const again = await startFake('seed', SCRIPT);
  const sA = await collect(await again.client().responses.create({ ...BASE, input: [USER], stream: true }));
  check('same --seed, same request number: same call ids', eq(fake.log()[0].tool_call_ids, again.log()[0].tool_call_ids) &&
    sA.events.length === ev.length, () => show([fake.log()[0].tool_call_ids, again.log()[0].tool_call_ids]));

  // ---- 7. faults
  const f429 = await startFake('f429', SCRIPT, ['--fault', '429@1:retry-after=1']);
  const t0 = Date.now();
  const s7 = await collect(await f429.client({ maxRetries: 1 }).responses.create({ ...BASE, input: [USER], stream: true }));
  const l7 = f429.log();
  check('429 retry-after=1: the SDK waits and its retry streams the turn',
    !s7.error && s7.events.at(-1)?.type === 'response.completed' && Date.now() - t0 >= 900 &&
    eq(l7.map((l) => l.status), [429, 200]) && l7[1].t - l7[0].t >= 0.9, () => String(s7.error ?? show(l7)));
  await expectError('429 without retries: RateLimitError rate_limit_exceeded',
    async () => (await startFake('f429b', SCRIPT, ['--fault', '429@1'])).client().responses.create({ ...BASE, input: [USER] }),
    { cls: OpenAI.RateLimitError, status: 429, code: 'rate_limit_exceeded' });
  const f500 = await startFake('f500', SCRIPT, ['--fault', '500@1']);
  const s7b = await collect(await f500.client({ maxRetries: 1 }).responses.create({ ...BASE, input: [USER], stream: true }));
  check('500 then a retry: the SDK retries and gets the stream', !s7b.error && s7b.events.at(-1)?.type === 'response.completed',
    () => String(s7b.error));
  await expectError('401 fault: AuthenticationError invalid_api_key',
    async () => (await startFake('f401', SCRIPT, ['--fault', '401@1'])).client().responses.create({ ...BASE, input: [USER] }),
    { cls: OpenAI.AuthenticationError, status: 401, code: 'invalid_api_key' });
  await expectError('--key mismatch: 401 with the key masked',
    async () => (await startFake('fkey', SCRIPT, ['--key', 'sk-right-key'])).client().responses.create({ ...BASE, input: [USER] }),
    { status: 401, code: 'invalid_api_key', words: 'sk-*********1234' });
  await expectError('--models: an unknown model gets 404 model_not_found',
    async () => (await startFake('fmod', SCRIPT, ['--models', 'gpt-4.1'])).client().responses.create({ ...BASE, input: [USER] }),
    { cls: OpenAI.NotFoundError, status: 404, code: 'model_not_found', words: "The model 'gpt-5' does not exist" });
  await expectError('404 fault: NotFoundError model_not_found',
    async () => (await startFake('f404', SCRIPT, ['--fault', '404@1'])).client().responses.create({ ...BASE, input: [USER] }),
    { cls: OpenAI.NotFoundError, status: 404, code: 'model_not_found' });
  await expectError('context fault: 400 context_length_exceeded, param input',
    async () => (await startFake('fctx', SCRIPT, ['--fault', 'context@1'])).client().responses.create({ ...BASE, input: [USER] }),
    { cls: OpenAI.BadRequestError, status: 400, code: 'context_length_exceeded', param: 'input' });

  const fcut = await startFake('fcut', SCRIPT, ['--fault', 'cut@1']);
  const s8 = await collect(await fcut.client().responses.create({ ...BASE, input: [USER], stream: true }));
  const last8 = s8.events.at(-1);
  const full0 = JSON.stringify(ARGS0);
  check('cut: the stream stops mid-arguments with no terminal event (the SDK just ends)',
    !s8.error && last8?.type === 'response.function_call_arguments.delta' &&
    !s8.events.some((e) => ['response.completed', 'response.incomplete', 'response.failed'].includes(e.type)) &&
    full0.startsWith(last8.delta) && last8.delta.length < full0.length, () => String(s8.error ?? show(last8)));
  const freset = await startFake('freset', SCRIPT, ['--fault', 'reset@1']);
  const s9 = await collect(await freset.client().responses.create({ ...BASE, input: [USER], stream: true }));
  check('reset: the SDK iteration throws (connection reset mid-stream)', s9.error &&
    !s9.events.some((e) => e.type === 'response.completed'), () => `events ${s9.events.length}, ${s9.error}`);

  const ferr = await startFake('ferr', SCRIPT, ['--fault', 'error-event@1']);
  const s10 = await collect(await ferr.client().responses.create({ ...BASE, input: [USER], stream: true }));
  check('error-event (nested, as the API sends): the SDK throws an APIError with its code',
    s10.error instanceof OpenAI.APIError && s10.error.code === 'server_error' && s10.events[0]?.type === 'response.created' &&
    s10.events.some((e) => e.type === 'response.output_text.delta'), () => `${s10.error} ${show(s10.events.map((e) => e.type))}`);
  const fflat = await startFake('fflat', SCRIPT, ['--fault', 'error-event@1:flat']);
  const s11 = await collect(await fflat.client().responses.create({ ...BASE, input: [USER], stream: true }));
  const e11 = s11.events.at(-1);
  check('error-event:flat (the documented ResponseErrorEvent): yielded as type "error" with code/message',
    !s11.error && e11?.type === 'error' && e11.code === 'server_error' && typeof e11.message === 'string' &&
    e11.sequence_number === s11.events.length - 1, () => String(s11.error ?? show(e11)));
  const ffail = await startFake('ffail', SCRIPT, ['--fault', 'failed@1']);
  let failedResp = null;
  let failedErr = null;
  try {
    failedResp = await ffail.client().responses.stream({ ...BASE, input: [USER] }).finalResponse();
  } catch (e) {
    failedErr = e;
  }
  check('failed: response.failed ends the stream; the helper\'s final response is failed with error.code',
    !failedErr && failedResp?.status === 'failed' && failedResp.error?.code === 'server_error',
    () => String(failedErr ?? show(failedResp)));
  const fctxe = await startFake('fctxe', SCRIPT, ['--fault', 'context-event@1']);
  const s12 = await collect(await fctxe.client().responses.create({ ...BASE, input: [USER], stream: true }));
  check('context-event: 200 stream, then an error event the SDK throws as context_length_exceeded',
    s12.error instanceof OpenAI.APIError && s12.error.code === 'context_length_exceeded' && s12.events.length === 2,
    () => `${s12.error} ${s12.events.length}`);
  await expectError('quota fault: 429 insufficient_quota',
    async () => (await startFake('fquota', SCRIPT, ['--fault', 'quota@1'])).client().responses.create({ ...BASE, input: [USER] }),
    { status: 429, code: 'insufficient_quota' });
  const fms = await startFake('fms', SCRIPT, ['--fault', '429ms@1:300']);
  const s13 = await collect(await fms.client({ maxRetries: 1 }).responses.create({ ...BASE, input: [USER], stream: true }));
  check('429ms: retry-after-ms honoured by the SDK', !s13.error && eq(fms.log().map((l) => l.status), [429, 200]) &&
    fms.log()[1].t - fms.log()[0].t >= 0.28, () => String(s13.error ?? show(fms.log())));

  // ---- 8. wire details
  const s14 = await collect(await client.responses.create({ ...BASE, input: 'List the files.', stream: true }));
  check('input as a plain string is one user message (turn 0)', !s14.error && fake.log().at(-1).turn_index === 0 &&
    fake.log().at(-1).n_input === 1, () => show(fake.log().at(-1)));
  const rsOnly = final.output[0];
  const inter = [USER, rsOnly, final.output[1], calls[0], outputs[0], calls[1], outputs[1]];
  const s15 = await collect(await client.responses.create({ ...BASE, input: inter, stream: true }));
  check('outputs interleaved with the calls of the same turn still count as one turn (-> turn 1)',
    !s15.error && fake.log().at(-1).turn_index === 1, () => String(s15.error ?? show(fake.log().at(-1))));
  await expectError('400 the same item id twice',
    () => client.responses.create({ ...BASE, input: [USER, rsOnly, final.output[1], final.output[1], ...calls, ...outputs] }),
    { status: 400, words: 'Duplicate item found with id' });
  await expectError('400 an unknown key inside an item',
    () => client.responses.create({ ...BASE, input: [{ ...USER, name: 'bob' }] }),
    { status: 400, param: 'input[0].name', code: 'unknown_parameter' });
  await expectError('400 the scripted turn calls a tool the request does not offer',
    () => client.responses.create({ ...BASE, tools: undefined, input: [USER] }),
    { status: 400, param: 'tools', words: "calls tool 'shell'" });
  const stored = await client.responses.create({ ...BASE, store: true, include: undefined, input: [USER] });
  const refs = stored.output.map((o) => ({ type: 'item_reference', id: o.id }));
  const s16 = await collect(await client.responses.create({ ...BASE, store: true, include: undefined, stream: true,
    input: [USER, ...refs, ...stored.output.filter((o) => o.type === 'function_call')
      .map((c) => ({ type: 'function_call_output', call_id: c.call_id, output: 'ok' }))] }));
  check('item_reference to stored output items -> turn 1', !s16.error && fake.log().at(-1).turn_index === 1,
    () => String(s16.error ?? show(fake.log().at(-1))));
  const raw = async (body, ctype = 'application/json') => {
    const r = await fetch(`${fake.url}/responses`, { method: 'POST', body,
      headers: { Authorization: 'Bearer x', 'Content-Type': ctype } });
    return { status: r.status, body: await r.json(), headers: r.headers };
  };
  const rj = await raw('{not json');
  check('400 a body that is not JSON', rj.status === 400 && /could not parse the JSON body/.test(rj.body.error?.message),
    () => show(rj));
  const rc = await raw(JSON.stringify({ model: 'gpt-5', input: 'x' }), 'text/plain');
  check('400 a Content-Type other than application/json', rc.status === 400 && /Content-Type/.test(rc.body.error?.message),
    () => show(rc));
  const noAuth = await fetch(`${fake.url}/responses`, { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } });
  check('401 with no Authorization header', noAuth.status === 401, () => String(noAuth.status));
  const models = await client.models.list();
  check('GET /models lists the served models (fake-model without --models)', models.data.map((m) => m.id).join() === 'fake-model',
    () => show(models.data));
  const flax = await startFake('flax', SCRIPT, ['--lax-reasoning']);
  const lc = flax.client();
  const lr = await lc.responses.create({ ...BASE, input: [USER] });
  const lcalls = lr.output.filter((o) => o.type === 'function_call');
  const s17 = await collect(await lc.responses.create({ ...BASE, stream: true, input: [USER, ...lcalls,
    ...lcalls.map((c) => ({ type: 'function_call_output', call_id: c.call_id, output: 'ok' }))] }));
  check('--lax-reasoning: function calls sent back without their reasoning item are accepted',
    !s17.error && s17.events.at(-1)?.type === 'response.completed', () => String(s17.error));

  // ---- images (protocols.md F): input_image parts in function_call_output.output, as the
  // SDK's types build them; the fake writes what it accepted to --images-dir
  const imgDir = path.join(T, 'images');
  const fimg = await startFake('images', SCRIPT, ['--images-dir', imgDir]);
  const ic = fimg.client();
  const png = execFileSync(PY, [path.join(HERE, 'imgdata.py'), 'png', '64', '48']);
  const dataUrl = (mt) => `data:${mt};base64,${png.toString('base64')}`;
  const ir = await ic.responses.create({ ...BASE, input: [USER] });
  const icalls = ir.output.filter((o) => o.type === 'function_call');
  const imgOut = (mt, detail) => [USER, ...ir.output, ...icalls.map((c, i) => ({
    type: 'function_call_output', call_id: c.call_id, output: i === 0 ? [
      { type: 'input_text', text: 'output/chart.png (64x48):' },
      { type: 'input_image', image_url: dataUrl(mt), detail }] : 'ok' }))];
  const s18 = await collect(await ic.responses.create({ ...BASE, stream: true, input: imgOut('image/png', 'auto') }));
  check('images: function_call_output.output [input_text, input_image] -> turn 1',
    !s18.error && s18.events.find((e) => e.type === 'response.output_text.done')?.text === SCRIPT.turns[1].text,
    () => String(s18.error));
  const iL = fimg.log().at(-1);
  const files = fs.existsSync(imgDir) ? fs.readdirSync(imgDir) : [];
  check('images: the fake got the PNG byte for byte (--images-dir) and logged 64x48 detail auto',
    files.length === 1 && fs.readFileSync(path.join(imgDir, files[0])).equals(png)
    && iL?.n_images === 1 && iL.images[0].width === 64 && iL.images[0].height === 48
    && iL.images[0].detail === 'auto', () => show([files, iL]));
  await expectError('images: 400 a data URL whose media type does not match the bytes',
    () => ic.responses.create({ ...BASE, input: imgOut('image/jpeg', 'low') }),
    { cls: OpenAI.BadRequestError, status: 400, code: 'invalid_value',
      param: `input[${ir.output.length + 1}].output[1].image_url`, words: 'but the bytes are a image/png image' });
}

try {
  await main();
} catch (e) {
  ko('the check script ran to the end', e?.stack ?? String(e));
} finally {
  for (const s of servers) s.kill('SIGTERM');
  if (!process.env.KEEP) fs.rmSync(T, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

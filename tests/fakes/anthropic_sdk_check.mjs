// anthropic_sdk_check.mjs: drives tests/fakes/fake_anthropic.py with the official
// @anthropic-ai/sdk from npm, to show that the fake speaks the real protocol: the
// SDK's own stream parser and MessageStream rebuild its streams (text, tool_use input
// from input_json_delta, thinking with its signature), a tool_result round trip and a
// thinking block sent back unchanged are accepted, and the SDK reads the fake's errors
// (status, error type, request-id, retry-after, the in-stream `event: error`).
//
// Usage: node tests/fakes/anthropic_sdk_check.mjs --sdk DIR [--python PY] [--keep]
//   DIR holds node_modules/@anthropic-ai/sdk (npm install --prefix DIR @anthropic-ai/sdk).
// Prints "ok   ..." / "FAIL ..." per check and ends with "N passed, M failed";
// exits 1 on any failure.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const opt = { sdk: null, python: '/usr/bin/python3', keep: false };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--sdk') opt.sdk = process.argv[++i];
  else if (a === '--python') opt.python = process.argv[++i];
  else if (a === '--keep') opt.keep = true;
  else {
    console.error(`anthropic_sdk_check: unknown argument ${a}`);
    process.exit(2);
  }
}
if (!opt.sdk) {
  console.error('usage: node anthropic_sdk_check.mjs --sdk DIR [--python PY] [--keep]');
  process.exit(2);
}
const requireSdk = createRequire(path.join(path.resolve(opt.sdk), 'noop.js'));
const sdk = requireSdk('@anthropic-ai/sdk');
const Anthropic = sdk.Anthropic ?? sdk.default;
const sdkVersion = JSON.parse(fs.readFileSync(path.join(path.resolve(opt.sdk),
  'node_modules', '@anthropic-ai', 'sdk', 'package.json'), 'utf8')).version;

const T = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-anthropic-sdk.'));
const FAKE = path.join(HERE, 'fake_anthropic.py');
const KEY = 'sk-ant-test-0123456789';
const MODEL = 'claude-test-1';
let passed = 0;
let failed = 0;
const servers = [];
process.on('SIGTERM', () => { // a timeout: stop the fake servers too
  for (const s of servers) s.kill();
  if (!opt.keep) fs.rmSync(T, { recursive: true, force: true });
  process.exit(143);
});

function ok(name) { passed++; console.log(`ok   ${name}`); }
function ko(name, detail) { failed++; console.log(`FAIL ${name}${detail ? ` -- ${detail}` : ''}`); }
function check(name, cond, detail) {
  if (cond) ok(name); else ko(name, typeof detail === 'function' ? detail() : detail);
}
const show = (x) => JSON.stringify(x)?.slice(0, 400);

// ------------------------------------------------------------------ the script and requests
const THINKING = 'The user wants the files: list them — naïvely first, then look closer.';
const TEXT0 = 'Let me look at the files ✓ (\u00e9t\u00e9, \u6587\u4ef6).';
const ARGS0 = { command: 'ls -la "input dir" && echo \'naïve\' \\ done', timeout: 30 };
const SCRIPT = {
  turns: [
    { thinking: THINKING, text: TEXT0,
      tool_calls: [{ name: 'shell', arguments: ARGS0 }, { name: 'list_files', arguments: {} }] },
    { text: 'Done: 3 files.' },
  ],
};
const scriptFile = path.join(T, 'script.json');
fs.writeFileSync(scriptFile, JSON.stringify(SCRIPT));

const TOOLS = [
  { name: 'shell', description: 'Run a shell command',
    input_schema: { type: 'object', properties: { command: { type: 'string' },
      timeout: { type: 'integer' } }, required: ['command'] } },
  { name: 'list_files', description: 'List the input files', input_schema: { type: 'object' },
    cache_control: { type: 'ephemeral' } },
];
const SYSTEM = [{ type: 'text', text: 'You are a careful data analyst. '.repeat(40),
  cache_control: { type: 'ephemeral' } }];
const USER0 = { role: 'user', content: 'List the files in the input directory.' };
const base = (extra = {}) => ({ model: MODEL, max_tokens: 4096, system: SYSTEM, tools: TOOLS,
  thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [USER0], ...extra });

// ------------------------------------------------------------------ fake servers
async function startFake(name, extra = []) {
  const pf = path.join(T, `${name}.port`);
  const lf = path.join(T, `${name}.log`);
  const child = spawn(opt.python, [FAKE, '--script', scriptFile, '--port', '0', '--port-file', pf,
    '--log', lf, '--seed', '11', '--delay-ms', '0.2', ...extra],
  { stdio: ['ignore', 'ignore', fs.openSync(path.join(T, `${name}.err`), 'w')] });
  servers.push(child);
  for (let i = 0; i < 400 && !fs.existsSync(pf); i++) await new Promise((r) => setTimeout(r, 25));
  if (!fs.existsSync(pf)) {
    ko(`start ${name}`, fs.readFileSync(path.join(T, `${name}.err`), 'utf8'));
    throw new Error('fake server did not start');
  }
  const port = Number(fs.readFileSync(pf, 'utf8').trim());
  return {
    url: `http://127.0.0.1:${port}`,
    log: () => (fs.existsSync(lf) ? fs.readFileSync(lf, 'utf8').trim().split('\n')
      .filter(Boolean).map((l) => JSON.parse(l)) : []),
    stop: () => child.kill(),
  };
}

// The client assay will be: x-api-key and anthropic-version 2023-06-01, as the 0.x SDK
// sends them (1.x sends Authorization: Bearer and 2026-10-21 unless told otherwise).
function client(srv, extra = {}) {
  const { apiKey = KEY, headers = {}, ...rest } = extra;
  return new Anthropic({ apiKey, baseURL: srv.url, maxRetries: 2, timeout: 20000,
    defaultHeaders: { 'anthropic-version': '2023-06-01', 'x-api-key': apiKey,
      Authorization: null, ...headers }, ...rest });
}

// Runs a stream; returns the raw events, the SDK's events and the final message (or error).
async function runStream(c, params) {
  const raw = [];
  const seen = { text: '', inputJson: 0, signature: 0, thinking: '' };
  const stream = c.messages.stream(params);
  stream.on('text', (d) => { seen.text += d; });
  stream.on('inputJson', () => { seen.inputJson++; });
  stream.on('signature', () => { seen.signature++; });
  stream.on('thinking', (d) => { seen.thinking += d; });
  let error = null;
  let final = null;
  try {
    for await (const ev of stream) raw.push(ev);
    final = await stream.finalMessage();
  } catch (e) {
    error = e;
  }
  return { raw, seen, final, error };
}

async function expectError(name, promise, want) {
  try {
    await promise;
    ko(name, 'no error');
    return null;
  } catch (e) {
    const problems = [];
    if (want.status !== undefined && e.status !== want.status) problems.push(`status ${e.status}`);
    if (want.type && e.type !== want.type) problems.push(`type ${e.type}`);
    if (want.message && !(e.error?.error?.message ?? e.message ?? '').includes(want.message)) {
      problems.push(`message ${e.error?.error?.message ?? e.message}`);
    }
    if (want.cls && !(e instanceof want.cls)) problems.push(`class ${e.constructor?.name}`);
    check(name, problems.length === 0, () => problems.join('; '));
    return e;
  }
}

// partial_json per content block index, concatenated, then parsed strictly
function rebuildInputs(raw) {
  const bufs = new Map();
  for (const ev of raw) {
    if (ev.type === 'content_block_start' && ev.content_block.type === 'tool_use') {
      bufs.set(ev.index, { block: ev.content_block, frags: [] });
    } else if (ev.type === 'content_block_delta' && ev.delta.type === 'input_json_delta') {
      bufs.get(ev.index).frags.push(ev.delta.partial_json);
    }
  }
  return [...bufs.values()].map((b) => ({ ...b, input: JSON.parse(b.frags.join('') || '{}') }));
}

async function main() {
  console.log(`# @anthropic-ai/sdk ${sdkVersion}, fake ${FAKE}`);
  // ---------------------------------------------------------------- streaming with tools
  const main = await startFake('main', ['--cache-min-tokens', '50']);
  const c = client(main);
  const r0 = await runStream(c, base());
  check('stream turn 0: no error', !r0.error, () => String(r0.error));
  const m0 = r0.final;
  check('turn 0: blocks thinking, text, tool_use, tool_use',
    isDeepStrictEqual(m0?.content.map((b) => b.type), ['thinking', 'text', 'tool_use', 'tool_use']),
    () => show(m0?.content));
  check('turn 0: text rebuilt by the SDK (multi-byte characters intact)',
    m0?.content[1].text === TEXT0 && r0.seen.text === TEXT0, () => show(m0?.content[1]));
  check('turn 0: thinking rebuilt from thinking_delta', m0?.content[0].thinking === THINKING
    && r0.seen.thinking === THINKING, () => show(m0?.content[0]));
  check('turn 0: signature from signature_delta (one signature event)',
    typeof m0?.content[0].signature === 'string' && m0.content[0].signature.length > 40
    && r0.seen.signature === 1, () => show(m0?.content[0]));
  check('turn 0: tool_use inputs rebuilt by the SDK from input_json_delta',
    isDeepStrictEqual(m0?.content[2].input, ARGS0) && isDeepStrictEqual(m0?.content[3].input, {}),
    () => show(m0?.content.slice(2)));
  const inputs = rebuildInputs(r0.raw);
  check('turn 0: concatenated partial_json parses strictly to the same inputs',
    inputs.length === 2 && isDeepStrictEqual(inputs[0].input, ARGS0)
    && isDeepStrictEqual(inputs[1].input, {}), () => show(inputs));
  check('turn 0: each tool_use opens with input {} and partial_json "", then 2+ pieces',
    inputs.every((b) => isDeepStrictEqual(b.block.input, {}) && b.frags[0] === '')
    && inputs[0].frags.length >= 3 && inputs[1].frags.length >= 3, () => show(inputs));
  check("turn 0: the SDK's inputJson listener saw every piece",
    r0.seen.inputJson === inputs.reduce((n, b) => n + b.frags.length, 0),
    () => `${r0.seen.inputJson} events`);
  check('turn 0: tool_use ids toolu_..., distinct',
    m0?.content[2].id.startsWith('toolu_') && m0.content[2].id !== m0.content[3].id);
  check('turn 0: stop_reason tool_use, usage counted', m0?.stop_reason === 'tool_use'
    && m0.usage.output_tokens > 1 && m0.usage.input_tokens > 0, () => show(m0?.usage));
  const types = r0.raw.map((e) => e.type);
  check('turn 0: event order message_start ... message_delta, message_stop (pings filtered)',
    types[0] === 'message_start' && types.at(-2) === 'message_delta' && types.at(-1) === 'message_stop'
    && !types.includes('ping'), () => show(types));
  check('turn 0: the first request wrote the cache (system + tools breakpoints)',
    m0?.usage.cache_creation_input_tokens > 0 && m0.usage.cache_read_input_tokens === 0,
    () => show(m0?.usage));

  // ---------------------------------------------------------------- tool_result round trip
  const results = m0.content.filter((b) => b.type === 'tool_use').map((b, i) => ({
    type: 'tool_result', tool_use_id: b.id, content: i === 0 ? 'a.csv\nb.csv\nc.csv' : [
      { type: 'text', text: '3 files' }], ...(i === 1 ? { is_error: false } : {}),
  }));
  const history = [USER0, { role: 'assistant', content: m0.content },
    { role: 'user', content: [...results.slice(0, -1),
      { ...results.at(-1), cache_control: { type: 'ephemeral' } }] }];
  const r1 = await runStream(c, base({ messages: history }));
  check('turn 1: the assistant turn sent back as the SDK built it, tool_result first: 200',
    !r1.error && r1.final?.content[0]?.text === 'Done: 3 files.', () => String(r1.error));
  check('turn 1: stop_reason end_turn', r1.final?.stop_reason === 'end_turn');
  check('turn 1: the cached prefix (system, tools) is read back, the rest written',
    r1.final?.usage.cache_read_input_tokens === m0.usage.cache_creation_input_tokens
    && r1.final.usage.cache_creation_input_tokens > 0, () => show([m0.usage, r1.final?.usage]));
  const L = main.log();
  check('log: two 200s, turn indexes 0 and 1, version 2023-06-01',
    L.length === 2 && L.every((x) => x.status === 200 && x.anthropic_version === '2023-06-01')
    && L[0].turn_index === 0 && L[1].turn_index === 1, () => show(L));
  check('log: tool_use_ids are the ids the SDK saw', isDeepStrictEqual(L[0].tool_use_ids,
    [m0.content[2].id, m0.content[3].id]));

  // the same conversation through messages.create({stream: true}) (the raw event iterator)
  const raw = [];
  for await (const ev of await c.messages.create({ ...base(), stream: true })) raw.push(ev);
  check('create({stream:true}): raw events carry index and delta types the SDK knows',
    raw.filter((e) => e.type === 'content_block_delta').every((e) => ['text_delta',
      'input_json_delta', 'thinking_delta', 'signature_delta'].includes(e.delta.type)
      && Number.isInteger(e.index)), () => show(raw.slice(0, 5)));
  check('create({stream:true}): a second identical request reads the whole cache',
    raw[0].message.usage.cache_read_input_tokens === m0.usage.cache_creation_input_tokens
    && raw[0].message.usage.cache_creation_input_tokens === 0, () => show(raw[0].message.usage));
  check('message_delta usage: cumulative totals (input_tokens repeated, not to be added)',
    raw.at(-2).usage.input_tokens === raw[0].message.usage.input_tokens
    && raw.at(-2).usage.output_tokens >= raw[0].message.usage.output_tokens);

  // non-streaming
  const m = await c.messages.create(base());
  check('create() without stream: one Message with the parsed tool_use inputs',
    m.type === 'message' && isDeepStrictEqual(m.content[2]?.input, ARGS0)
    && m.stop_reason === 'tool_use', () => show(m));

  // count_tokens, models
  const ct = await c.messages.countTokens({ model: MODEL, system: SYSTEM, tools: TOOLS,
    messages: history });
  check('messages.countTokens: input_tokens = the whole prompt of turn 1',
    ct.input_tokens === r1.final.usage.input_tokens + r1.final.usage.cache_read_input_tokens
    + r1.final.usage.cache_creation_input_tokens, () => show([ct, r1.final.usage]));
  const ids = [];
  for await (const mi of c.models.list()) ids.push(mi.id);
  check('models.list: the fake-claude model', isDeepStrictEqual(ids, ['fake-claude']), show(ids));

  // the SDK's own headers
  const own = new Anthropic({ apiKey: KEY, baseURL: main.url, maxRetries: 0 });
  const mo = await own.messages.stream(base()).finalMessage().catch((e) => e);
  const ownLog = main.log().at(-1);
  check(`the SDK's own headers accepted (anthropic-version ${ownLog.anthropic_version}, `
    + `key in ${ownLog.auth})`, mo?.type === 'message', () => String(mo));
  await expectError('anthropic-version 2023-06-01 with the key only as a Bearer token -> 401',
    client(main, { headers: { 'x-api-key': null, Authorization: `Bearer ${KEY}` } })
      .messages.create(base()),
    { status: 401, type: 'authentication_error', message: 'x-api-key header is required' });
  await expectError('an unknown anthropic-version -> 400 "is not a valid version"',
    client(main, { headers: { 'anthropic-version': '2024-10-22' } }).messages.create(base()),
    { status: 400, type: 'invalid_request_error',
      message: 'anthropic-version: "2024-10-22" is not a valid version', cls: sdk.BadRequestError });

  // ---------------------------------------------------------------- what the fake refuses
  const noThinking = [USER0, { role: 'assistant', content: m0.content.slice(1) }, history[2]];
  await expectError('thinking enabled, the thinking block dropped -> 400 (must start with thinking)',
    c.messages.create(base({ messages: noThinking })),
    { status: 400, type: 'invalid_request_error',
      message: 'messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`' });
  const edited = [USER0, { role: 'assistant', content: [{ ...m0.content[0],
    thinking: `${THINKING} ` }, ...m0.content.slice(1)] }, history[2]];
  await expectError('thinking text edited, signature kept -> 400 Invalid signature',
    c.messages.create(base({ messages: edited })),
    { status: 400, message: 'messages.1.content.0: Invalid `signature` in `thinking` block' });
  const forged = [USER0, { role: 'assistant', content: [{ ...m0.content[0],
    signature: m0.content[0].signature.replace(/^./, (ch) => (ch === 'A' ? 'B' : 'A')) },
  ...m0.content.slice(1)] }, history[2]];
  await expectError('signature changed -> 400 Invalid signature',
    c.messages.create(base({ messages: forged })), { status: 400, message: 'Invalid `signature`' });
  const oneResult = [USER0, history[1], { role: 'user', content: [results[0]] }];
  const e400 = await expectError('one tool_use left unanswered -> 400 naming its id',
    c.messages.create(base({ messages: oneResult })),
    { status: 400, message: `messages.1: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${m0.content[3].id}` });
  check('400: request-id header read by the SDK (req_...)', e400?.requestID?.startsWith('req_'),
    String(e400?.requestID));
  check('400: body {type:"error", error:{type,message}, request_id}', e400?.error?.type === 'error'
    && e400.error.request_id === e400.requestID, () => show(e400?.error));
  await expectError('text before the tool_result -> 400 (tool_result must come first)',
    c.messages.create(base({ messages: [USER0, history[1], { role: 'user', content: [
      { type: 'text', text: 'here:' }, ...results] }] })),
    { status: 400, message: 'ids were found without `tool_result` blocks immediately after' });
  await expectError('a tool_result for an unknown id -> 400 unexpected tool_use_id',
    c.messages.create(base({ messages: [USER0, history[1], { role: 'user', content: [...results,
      { type: 'tool_result', tool_use_id: 'toolu_nope', content: 'x' }] }] })),
    { status: 400, message: 'messages.2.content.2: unexpected `tool_use_id` found in `tool_result` blocks: toolu_nope' });
  await expectError('OpenAI-shaped tool -> 400 (Anthropic tools: name, input_schema)',
    c.messages.create(base({ tools: [{ type: 'function', function: { name: 'shell',
      parameters: { type: 'object' } } }] })),
    { status: 400, message: "tools.0: Input tag 'function' found using 'type'" });
  await expectError('five cache_control breakpoints -> 400 (at most 4)',
    c.messages.create(base({ messages: [{ role: 'user', content: [1, 2, 3].map((k) => ({
      type: 'text', text: `part ${k}`, cache_control: { type: 'ephemeral' } })) }] })),
    { status: 400, message: 'A maximum of 4 blocks with cache_control may be provided. Found 5.' });
  await expectError('an unknown top-level parameter -> 400 Extra inputs',
    c.messages.create({ ...base(), reasoning_effort: 'high' }),
    { status: 400, message: 'reasoning_effort: Extra inputs are not permitted' });
  await expectError('max_tokens missing -> 400 Field required',
    c.messages.create({ model: MODEL, messages: [USER0] }),
    { status: 400, message: 'max_tokens: Field required' });
  await expectError('two user messages in a row -> 400 roles must alternate',
    c.messages.create(base({ messages: [USER0, USER0] })),
    { status: 400, message: 'roles must alternate between "user" and "assistant"' });
  main.stop();

  // ---------------------------------------------------------------- auth, model
  const auth = await startFake('auth', ['--key', KEY, '--models', MODEL]);
  await expectError('wrong x-api-key -> 401 authentication_error, not retried',
    client(auth, { apiKey: 'sk-ant-wrong' }).messages.create(base()),
    { status: 401, type: 'authentication_error', message: 'invalid x-api-key',
      cls: sdk.AuthenticationError });
  await expectError('unknown model -> 404 not_found_error "model: ..."',
    client(auth).messages.create(base({ model: 'claude-nope' })),
    { status: 404, type: 'not_found_error', message: 'model: claude-nope', cls: sdk.NotFoundError });
  check('log: 401 once (no retry), then 404 once', isDeepStrictEqual(auth.log().map((x) => x.status),
    [401, 404]), () => show(auth.log()));
  auth.stop();

  // ---------------------------------------------------------------- faults
  const f = await startFake('faults', ['--fault', '429@1:retry-after=1', '--fault', '529@3',
    '--fault', 'error-event@5', '--fault', 'cut@6', '--fault', 'reset@7', '--fault', '529@8',
    '--fault', 'context@9:1000']);
  const fc = client(f);
  const t0 = Date.now();
  const rr = await runStream(fc, base());
  check('429 retry-after: 1 -> the SDK waits and retries, the stream then completes',
    !rr.error && rr.final?.stop_reason === 'tool_use' && Date.now() - t0 >= 1000,
    () => String(rr.error));
  let FL = f.log();
  check('log: 429 then 200, at least 1 s apart', FL[0]?.status === 429 && FL[1]?.status === 200
    && FL[1].t - FL[0].t >= 1.0, () => show(FL));
  const r529 = await runStream(fc, base());
  FL = f.log();
  check('529 overloaded_error -> retried by the SDK (>= 500), then 200',
    !r529.error && FL[2]?.status === 529 && FL[3]?.status === 200, () => show(FL.slice(2)));
  const rev = await runStream(fc, base());
  check('in-stream event: error -> the SDK throws overloaded_error after some text',
    rev.error instanceof sdk.APIError && rev.error.type === 'overloaded_error'
    && rev.raw.some((e) => e.type === 'content_block_delta'), () => String(rev.error));
  const rcut = await runStream(fc, base());
  const cutTypes = rcut.raw.map((e) => e.type);
  check('cut mid tool_use: no message_stop, so finalMessage() rejects',
    rcut.error && /stream ended without producing a Message/.test(rcut.error.message)
    && !cutTypes.includes('message_stop'), () => `${rcut.error} ${show(cutTypes)}`);
  const lastCut = rcut.raw.at(-1);
  check('cut: the last event is a partial input_json_delta of the first tool_use',
    lastCut?.delta?.type === 'input_json_delta' && lastCut.delta.partial_json.length > 0
    && rcut.raw.some((e) => e.content_block?.type === 'tool_use'), () => show(lastCut));
  const rreset = await runStream(fc, base());
  check('reset mid stream: the SDK reports a connection error', rreset.error
    && !(rreset.error instanceof sdk.APIError && rreset.error.status), () => String(rreset.error));
  await expectError('529 with maxRetries 0 -> OverloadedError', client(f, { maxRetries: 0 })
    .messages.create(base()), { status: 529, type: 'overloaded_error', cls: sdk.APIError });
  await expectError('context fault -> 400 "prompt is too long: N tokens > 1000 maximum"',
    fc.messages.create(base()), { status: 400, message: 'tokens > 1000 maximum' });
  FL = f.log();
  check('log: statuses and faults in order', isDeepStrictEqual(FL.map((x) => x.status),
    [429, 200, 529, 200, 200, 200, 200, 529, 400]) && FL[4].fault === 'error-event@5'
    && FL[5].fault === 'cut@6', () => show(FL.map((x) => [x.status, x.fault])));
  f.stop();

  // ---------------------------------------------------------------- images (protocols.md F)
  // a tool_result whose content is text and an image block, as the SDK's types build it;
  // the fake writes what it accepted to --images-dir
  const imgDir = path.join(T, 'images');
  const im = await startFake('images', ['--images-dir', imgDir]);
  const ic = client(im);
  const png = execFileSync(opt.python, [path.join(HERE, 'imgdata.py'), 'png', '64', '48']);
  const im0 = await ic.messages.create(base());
  const uses = im0.content.filter((b) => b.type === 'tool_use');
  const withImage = (mediaType) => base({ messages: [USER0, { role: 'assistant', content: im0.content },
    { role: 'user', content: uses.map((b, i) => ({ type: 'tool_result', tool_use_id: b.id,
      content: i === 0 ? [{ type: 'text', text: 'output/chart.png (64x48):' },
        { type: 'image', source: { type: 'base64', media_type: mediaType, data: png.toString('base64') } }]
        : 'ok' })) }] });
  const ri = await runStream(ic, withImage('image/png'));
  check('images: tool_result content [text, image] (base64 PNG) -> 200, turn 1',
    !ri.error && ri.final?.content.at(-1)?.text === 'Done: 3 files.', () => String(ri.error));
  const files = fs.existsSync(imgDir) ? fs.readdirSync(imgDir) : [];
  const il = im.log().at(-1);
  check('images: the fake got the PNG byte for byte (--images-dir) and logged 64x48',
    files.length === 1 && fs.readFileSync(path.join(imgDir, files[0])).equals(png)
    && il?.n_images === 1 && il.images[0].width === 64 && il.images[0].height === 48,
    () => show([files, il]));
  await expectError('images: 400 a media_type that does not match the bytes',
    ic.messages.create(withImage('image/jpeg')), { status: 400, type: 'invalid_request_error',
      message: 'messages.2.content.0.tool_result.content.1.image.source.base64: The image was '
        + 'specified using the image/jpeg media type, but the image appears to be a image/png image' });
  im.stop();
}

try {
  await main();
} catch (e) {
  ko('unexpected exception', e?.stack ?? String(e));
} finally {
  for (const s of servers) s.kill();
  if (opt.keep) console.log(`# kept ${T}`);
  else fs.rmSync(T, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

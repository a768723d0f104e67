// Drives tests/fakes/fake_opensandbox.py through the official TypeScript SDK
// (@alibaba-group/opensandbox, installed by tests/e2e/fake_opensandbox_selftest.sh).
// Usage: node opensandbox_sdk_check.mjs --sdk DIR --fake FAKE.py --python PY --tmp DIR
// Prints ok/FAIL lines and ends with "N passed, M failed"; exit 1 on a failure.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
const KEY = "osk-sdk-key";
let passed = 0;
let failed = 0;
function check(name, cond, detail) {
  if (cond) {
    passed++;
    console.log(`ok   ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${name}${detail !== undefined ? " -- " + JSON.stringify(detail).slice(0, 600) : ""}`);
  }
  return cond;
}
async function attempt(name, fn) {
  try {
    return await fn();
  } catch (e) {
    check(name, false, `${e?.name}: ${e?.message} ${e?.statusCode ?? ""}`);
    return undefined;
  }
}

const pkg = join(args.sdk, "node_modules", "@alibaba-group", "opensandbox");
const version = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).version;
console.log(`# @alibaba-group/opensandbox ${version}`);
const sdk = await import(pathToFileURL(join(pkg, "dist", "index.js")).href);
const { Sandbox, SandboxManager, ConnectionConfig } = sdk;

// the fake
mkdirSync(args.tmp, { recursive: true });
const pf = join(args.tmp, "port");
const log = join(args.tmp, "fake.log");
const fake = spawn(args.python, [args.fake, "--port", "0", "--port-file", pf, "--log", log,
  "--key", KEY, "--start-ms", "300", "--root", args.tmp], { stdio: ["ignore", "ignore", "inherit"] });
process.on("exit", () => fake.kill());
for (let i = 0; i < 200 && !existsSync(pf); i++) await new Promise((r) => setTimeout(r, 25));
const port = readFileSync(pf, "utf8").trim();
process.env.OPEN_SANDBOX_DOMAIN = `127.0.0.1:${port}`;
process.env.OPEN_SANDBOX_API_KEY = KEY;
process.env.OPENSANDBOX_DISABLE_METRICS = "1";
const lines = () => readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l));
// the fake logs a request after its answer is sent: wait a little for it
const seen = async (pred) => {
  for (let i = 0; i < 60; i++) {
    if (lines().some(pred)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
};

let sbx;
await attempt("Sandbox.create against the fake", async () => {
  sbx = await Sandbox.create({ image: "python:3.11", timeoutSeconds: 600, metadata: { suite: "sdk" },
    env: { SDK_VAR: "from-create" } });
});
if (sbx) {
  check("create: an id", typeof sbx.id === "string" && sbx.id.length > 8, sbx.id);
  const info = await attempt("getInfo", () => sbx.getInfo());
  check("getInfo: Running, createdAt/expiresAt as Dates, image",
    info?.status?.state === "Running" && info.createdAt instanceof Date && info.expiresAt instanceof Date
    && info.image?.uri === "python:3.11", info);
  check("create sent what the spec requires (entrypoint, resourceLimits) and read the env vars: "
    + "the log shows POST /v1/sandboxes 202 then the execd endpoint",
    await seen((l) => l.method === "POST" && l.path === "/v1/sandboxes" && l.status === 202)
    && await seen((l) => /\/endpoints\/44772/.test(l.path) && l.status === 200), lines().slice(0, 4));
  check("the SDK polled /ping until execd answered (with the endpoint's header: 200)",
    await seen((l) => l.api === "execd" && /\/ping$/.test(l.path) && l.status === 200));
  check("isHealthy", await attempt("isHealthy", () => sbx.isHealthy()) === true);

  const ex = await attempt("commands.run", () => sbx.commands.run(
    "printf 'alpha\\n\\nbeta <&>\\ngamma'; echo $SDK_VAR; echo warn >&2; pwd",
    { workingDirectory: "/workspace" }));
  if (ex) {
    check("commands.run: stdout one message per line (the fake's line events)",
      JSON.stringify(ex.logs.stdout.map((m) => m.text))
      === JSON.stringify(["alpha", "\n", "beta <&>", "gammafrom-create", "/workspace"]),
      ex.logs.stdout.map((m) => m.text));
    check("commands.run: stderr", ex.logs.stderr.map((m) => m.text).join("|") === "warn", ex.logs.stderr);
    check("commands.run: the init id, complete, exitCode 0",
      typeof ex.id === "string" && ex.id.length > 0 && ex.complete && ex.exitCode === 0 && !ex.error, ex);
  }
  const bad = await attempt("commands.run (exit 3)", () => sbx.commands.run("exit 3"));
  check("commands.run: a failing command -> error value \"3\", exitCode 3",
    bad?.error?.value === "3" && bad?.error?.name === "CommandExecError" && bad?.exitCode === 3, bad);
  const to = await attempt("commands.run (timeout)", () => sbx.commands.run("sleep 20",
    { timeoutSeconds: 0.5 }));
  check("commands.run: timeoutSeconds -> killed, exitCode -1", to?.exitCode === -1, to);

  await attempt("files.writeFiles", () => sbx.files.writeFiles([
    { path: "/workspace/sdk/hello.txt", data: "hello from the SDK ✓\n", mode: 640 },
    { path: "/workspace/sdk/data.bin", data: new Uint8Array([0, 1, 2, 255]) }]));
  const text = await attempt("files.readFile", () => sbx.files.readFile("/workspace/sdk/hello.txt"));
  check("files: written then read back (UTF-8)", text === "hello from the SDK ✓\n", text);
  const bytes = await attempt("files.readBytes", () => sbx.files.readBytes("/workspace/sdk/data.bin"));
  check("files: binary bytes", bytes && Array.from(bytes).join(",") === "0,1,2,255", bytes);
  const part = await attempt("files.readFile with range", () => sbx.files.readFile(
    "/workspace/sdk/hello.txt", { range: "bytes=6-9" }));
  check("files: a Range read", part === "from", part);
  const infos = await attempt("files.getFileInfo", () => sbx.files.getFileInfo(["/workspace/sdk/hello.txt"]));
  check("files.getFileInfo: mode 640, size", infos?.["/workspace/sdk/hello.txt"]?.mode === 640, infos);
  const ls = await attempt("files.listDirectory", () => sbx.files.listDirectory({ path: "/workspace/sdk" }));
  check("files.listDirectory", JSON.stringify((ls ?? []).map((e) => e.path)) ===
    JSON.stringify(["/workspace/sdk/data.bin", "/workspace/sdk/hello.txt"]), ls);
  const cat = await attempt("commands.run cat", () => sbx.commands.run("cat /workspace/sdk/hello.txt"));
  check("files: the uploaded file is in the command's /workspace",
    cat?.logs.stdout.map((m) => m.text).join("") === "hello from the SDK ✓", cat?.logs);
  let missing;
  try {
    await sbx.files.readFile("/workspace/none");
  } catch (e) {
    missing = e;
  }
  check("files: a missing file -> SandboxApiException 404", missing?.statusCode === 404, missing?.message);

  const mgr = SandboxManager.create({});
  const list = await attempt("SandboxManager.listSandboxInfos", () =>
    mgr.listSandboxInfos({ metadata: { suite: "sdk" }, states: ["Running"] }));
  check("list with a metadata and a state filter finds it", list?.items?.length === 1 &&
    list.items[0].id === sbx.id, list);
  const none = await attempt("listSandboxInfos (no match)", () =>
    mgr.listSandboxInfos({ metadata: { suite: "other" } }));
  check("list with a metadata filter that matches nothing", none?.items?.length === 0, none);

  const before = (await sbx.getInfo()).expiresAt;
  const renewed = await attempt("renew", () => sbx.renew(7200));
  const after = (await sbx.getInfo()).expiresAt;
  check("renew: expiresAt moved about 2 h ahead", renewed && after instanceof Date &&
    after.getTime() - Date.now() > 7000e3 && after.getTime() > before.getTime(), { before, after, renewed });

  await attempt("kill", () => sbx.kill());
  let gone;
  try {
    await sbx.getInfo();
  } catch (e) {
    gone = e;
  }
  check("kill: the sandbox is gone (getInfo -> 404)", gone?.statusCode === 404, gone?.message);
  check("kill: DELETE /v1/sandboxes/{id} answered 204",
    await seen((l) => l.method === "DELETE" && l.path === `/v1/sandboxes/${sbx.id}` && l.status === 204));
  check("OPENSANDBOX_DISABLE_METRICS=1: no telemetry was posted",
    !lines().some((l) => l.path.startsWith("/v1/metrics")));
  await sbx.close();
  await mgr.close?.();
}

// resource and networkPolicy as the SDK sends them (it fills defaultAction "deny"): the fake
// accepts its shape, logs it, and its commands get no network and the memory limit
let sbx3;
await attempt("create with resource and networkPolicy", async () => {
  sbx3 = await Sandbox.create({ image: "python:3.11", resource: { cpu: "250m", memory: "256Mi" },
    networkPolicy: { egress: [{ action: "allow", target: "pypi.org" }] } });
});
if (sbx3) {
  const line = await seen((l) => l.method === "POST" && l.sandbox === sbx3.id)
    ? lines().find((l) => l.method === "POST" && l.sandbox === sbx3.id) : undefined;
  check("create: the SDK's networkPolicy {defaultAction: deny, egress} and resourceLimits reached "
    + "the fake as sent; no network, RLIMIT_AS 256Mi enforced",
    JSON.stringify(line?.networkPolicy) === JSON.stringify({ egress: [{ action: "allow", target: "pypi.org" }],
      defaultAction: "deny" }) && line?.resourceLimits?.memory === "256Mi"
    && line?.enforced?.network === "none" && line?.enforced?.rlimit_as === 256 * 2 ** 20, line);
  const net = await attempt("commands.run (connect)", () => sbx3.commands.run(
    `python3 -c 'import socket; socket.create_connection(("127.0.0.1", ${port}), timeout=5)' && echo CONNECTED`));
  check("networkPolicy deny: the fake's port is not reached", net && net.exitCode !== 0 &&
    !net.logs.stdout.some((m) => m.text === "CONNECTED"), net?.logs);
  await attempt("commands.run (write /tmp)", () => sbx3.commands.run("echo kept > /tmp/k"));
  const k = await attempt("commands.run (read /tmp)", () => sbx3.commands.run("cat /tmp/k"));
  check("/tmp persists across commands", k?.logs.stdout.map((m) => m.text).join("") === "kept", k?.logs);
  const f = await attempt("files.readFile /tmp", () => sbx3.files.readFile("/tmp/k"));
  check("files: readFile under /tmp", f === "kept\n", f);
  await sbx3.kill();
  await sbx3.close();
}

// a wrong key: the SDK surfaces the 401
let authErr;
try {
  await Sandbox.create({ image: "python:3.11", connectionConfig: new ConnectionConfig({ apiKey: "wrong" }),
    readyTimeoutSeconds: 5 });
} catch (e) {
  authErr = e;
}
check("a wrong API key: create fails with 401 (INVALID_API_KEY)", authErr?.statusCode === 401
  && JSON.stringify(authErr?.rawBody ?? authErr?.error ?? "").includes("INVALID_API_KEY"), authErr?.message);

// with telemetry on, the 404 of /v1/metrics/events must not break create
delete process.env.OPENSANDBOX_DISABLE_METRICS;
let sbx2;
await attempt("create with telemetry on", async () => {
  sbx2 = await Sandbox.create({ image: "python:3.11" });
});
if (sbx2) {
  await new Promise((r) => setTimeout(r, 300));
  check("telemetry on: create succeeds although /v1/metrics/events answers 404",
    await seen((l) => l.path.startsWith("/v1/metrics/events") && l.status === 404), lines().slice(-3));
  await sbx2.kill();
  await sbx2.close();
}

fake.kill();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

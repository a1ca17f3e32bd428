// The console in a real browser: Debian's Chromium, driven by playwright-core, against the real
// `toolgate serve` (auth on, signed checkpoints, the console on its side port) while an agent
// on @grpc/grpc-js makes calls whose names are hostile. An auditor and approver signs in,
// filters the trail, opens a call's story and its inclusion proof (and downloads its offline
// proof, which `toolgate verify --proof` accepts), approves a waiting call
// (and the agent's Await returns), exports a CSV with its manifest that `toolgate verify`
// accepts, and verifies the chain. No dialog may open and no script error may happen on any
// page; a screenshot of each page is written to $TOOLGATE_SCREENSHOTS (default
// target/console-screenshots).
//
// TOOLGATE_BIN is the binary; TOOLGATE_ROOT the repository (for the proto files); CHROMIUM
// the browser (default /usr/bin/chromium).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";
import { chromium } from "playwright-core";
import { freePort, serve, until } from "./helpers.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = process.env.TOOLGATE_ROOT ?? path.resolve(here, "../..");
const bin = process.env.TOOLGATE_BIN ?? path.join(root, "target/debug/toolgate");
const browserPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const shots = path.resolve(root, process.env.TOOLGATE_SCREENSHOTS ?? "target/console-screenshots");

const AGENT = "agent-token-5e1d";
const BOB = "bob-token-8a2c"; // auditor and approver, acting as bob
const LONG = "L".repeat(10_000);
const HOSTILE = {
  actor: "<script>alert('actor')</script>",
  tool: `"><img src=x onerror=alert('tool')>`,
  session: "javascript:alert('session')",
  rtl: "invoice\u202efdp.exe",
};

// The embedded default policy (unknown tools denied, writes need their flag), and deploys wait
// for a person.
const POLICY = `${readFileSync(path.join(root, "src/policy/default.cedar"), "utf8")}
@id("deploys-need-approval")
@reason("deploys need a human: {tool}")
@outcome("require_approval")
forbid (principal, action == Action::"release.deploy", resource);
`;

let dir, server, browser, context, page, gate, approvals, side, trailDb, logKey;
const troubles = [];

const sha256 = (text) =>
  execFileSync("sha256sum", { input: text }).toString().split(" ")[0];

function call(client, method, message, token = AGENT) {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return new Promise((resolve, reject) =>
    client[method](message, metadata, (error, answer) => (error ? reject(error) : resolve(answer))),
  );
}

async function decide(actor, tool, session, args = { path: "README.md" }) {
  return call(gate, "Decide", {
    session_id: session,
    actor: { id: actor, kind: "agent" },
    tool,
    args_json: JSON.stringify(args),
  });
}

async function shot(name) {
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
}

/** Nothing on the page ran that the console did not write. */
async function assertInert() {
  const injected = await page.evaluate(() => ({
    images: document.querySelectorAll("img").length,
    scripts: [...document.querySelectorAll("script")].map((s) => s.getAttribute("src")),
    handlers: [...document.querySelectorAll("*")].filter((e) =>
      [...e.attributes].some((a) => a.name.startsWith("on")),
    ).length,
    scriptLinks: [...document.querySelectorAll("a[href]")].filter((a) =>
      a.getAttribute("href").trim().toLowerCase().startsWith("javascript:"),
    ).length,
  }));
  assert.equal(injected.images, 0, "an <img> reached the page");
  assert.equal(injected.handlers, 0, "an on… attribute reached the page");
  assert.equal(injected.scriptLinks, 0, "a javascript: link reached the page");
  assert.ok(injected.scripts.every((src) => src && src.startsWith("/ui/static/")), injected.scripts);
  assert.deepEqual(troubles, [], "a dialog opened or a script failed");
}

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolgate-console-"));
  mkdirSync(shots, { recursive: true });
  logKey = execFileSync(
    bin,
    ["keygen", "--name", "toolgate/console-test", "--out", path.join(dir, "log.key")],
    { encoding: "utf8" },
  ).trim();
  writeFileSync(path.join(dir, "policy.cedar"), POLICY);
  const [grpcPort, httpPort] = [await freePort(), await freePort()];
  side = `http://127.0.0.1:${httpPort}`;
  trailDb = path.join(dir, "trail.db");
  writeFileSync(
    path.join(dir, "toolgate.toml"),
    `listen = "127.0.0.1:${grpcPort}"
http_listen = "127.0.0.1:${httpPort}"
db = "${trailDb}"
policy = "${path.join(dir, "policy.cedar")}"

[limits]
max_name_bytes = 20000

[console]
enabled = true

[checkpoints]
key_file = "${path.join(dir, "log.key")}"
every_events = 5

[tools.deploy]
safety = "read_only"
action = "release.deploy"

[[auth.tokens]]
id = "agents"
sha256 = "${sha256(AGENT)}"
roles = ["agent"]
actors = ["*"]

[[auth.tokens]]
id = "bob"
sha256 = "${sha256(BOB)}"
roles = ["auditor", "approver"]
actors = ["bob"]
`,
  );
  server = await serve(bin, path.join(dir, "toolgate.toml"), side);

  const loaded = protoLoader.loadSync(["toolgate/v1/gate.proto", "toolgate/v1/approvals.proto"], {
    includeDirs: [path.join(root, "proto")],
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
  });
  const v1 = grpc.loadPackageDefinition(loaded).toolgate.v1;
  const address = `127.0.0.1:${grpcPort}`;
  gate = new v1.Gate(address, grpc.credentials.createInsecure());
  approvals = new v1.Approvals(address, grpc.credentials.createInsecure());

  // The trail: ordinary calls, their executions, and calls whose every name is hostile.
  for (let i = 0; i < 6; i++) {
    const read = await decide("alice", "read", "s-1", { path: `src/${i}.rs` });
    await call(gate, "Execute", {
      decision_id: read.decision_id,
      args_json: JSON.stringify({ path: `src/${i}.rs` }),
      status: "OK",
      duration_us: 1500 + i,
      output: "fn main() {}",
    });
  }
  await decide("alice", "write", "s-1");
  await decide(HOSTILE.actor, "read", HOSTILE.session);
  await decide("mallory", HOSTILE.tool, "s-2");
  await decide("mallory", HOSTILE.rtl, "s-2");
  await decide("mallory", LONG, LONG);

  browser = await chromium.launch({
    executablePath: browserPath,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  page = await context.newPage();
  page.on("dialog", async (dialog) => {
    troubles.push(`dialog: ${dialog.message()}`);
    await dialog.dismiss();
  });
  // Script errors and policy violations; a refusal's status (a wrong token, say) is the
  // server's answer, not the page's trouble, but every file the pages load must load.
  page.on("console", (message) => {
    const text = message.text();
    if (message.type() === "error" && !text.startsWith("Failed to load resource")) {
      troubles.push(`console: ${text}`);
    }
  });
  page.on("response", (response) => {
    if (response.url().includes("/ui/static/") && response.status() !== 200) {
      troubles.push(`${response.status()}: ${response.url()}`);
    }
  });
  page.on("pageerror", (error) => troubles.push(`page error: ${error.message}`));
});

after(async () => {
  await browser?.close();
  gate?.close();
  approvals?.close();
  if (server && server.exitCode === null) {
    server.kill("SIGTERM");
    await new Promise((resolve) => server.once("exit", resolve));
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("signing in with a token leads to the overview", async () => {
  const answer = await page.goto(`${side}/ui`);
  assert.equal(new URL(page.url()).pathname, "/ui/sign-in");
  const csp = (await answer.allHeaders())["content-security-policy"];
  assert.match(csp, /default-src 'none'/);
  await page.fill("#token", "not a token");
  await page.click("button[type=submit]");
  await page.getByText("not signed in: no valid bearer token").waitFor();
  await shot("sign-in");
  await page.fill("#token", BOB);
  await page.click("button[type=submit]");
  await page.waitForURL(`${side}/ui`);
  // The followers count the trail and check the chain in the background.
  await until("the overview's counts, and the chain verified to its head", async () => {
    await page.reload();
    const text = await page.textContent("main");
    const verified = text.match(/verified through seq (\d+)/)?.[1];
    const latest = text.match(/The latest event is seq (\d+)/)?.[1];
    return verified && verified === latest && text.includes("✓ Intact") && !text.includes("Counting");
  });
  const text = await page.textContent("main");
  assert.match(text, /Signed by\s*toolgate\/console-test\s*✓ verified/);
  assert.ok(text.includes(HOSTILE.tool), "the most denied tools, as text");
  await assertInert();
  await shot("overview");
});

test("the trail filters, pages and shows hostile names as text", async () => {
  await page.click("nav >> text=Trail");
  await page.waitForURL(`${side}/ui/trail`);
  const cells = await page.locator("tbody td").allTextContents();
  assert.ok(cells.includes(HOSTILE.actor), "markup shown as text");
  assert.ok(cells.some((c) => c.includes("invoiceU+202Efdp.exe")), "the override shown as a mark");
  assert.ok(cells.some((c) => c.includes("(10000 characters)")), "a 10,000-character name clipped");
  await assertInert();
  await shot("trail");

  await page.fill("input[name=tool]", "read");
  await page.selectOption("select[name=kind]", "decision");
  await page.click("form.filters button[type=submit]");
  await page.waitForURL(/tool=read/);
  const tools = await page.locator("tbody tr td:nth-child(5)").allTextContents();
  assert.equal(tools.length, 7);
  assert.ok(tools.every((t) => t === "read"), tools.join());
});

test("a call's story shows every step and its inclusion proof", async () => {
  await page.goto(`${side}/ui/trail?tool=read&kind=execution`);
  // The oldest execution: a checkpoint covers it by now.
  await page.locator("tbody tr").last().locator("td a").first().click();
  await page.waitForURL(/\/ui\/story\?decision=/);
  const text = await page.textContent("main");
  assert.ok(text.includes("A call's story"));
  assert.match(text, /Status\s*ok/);
  assert.match(text, /Duration\s*1\.50\d ms/);
  await page.locator("details").first().click();
  await page.getByText("Included in the signed checkpoint of").first().waitFor();
  await assertInert();
  await shot("story");
  // Its offline proof downloads, and verifies alone with the log's key.
  const [proof] = await Promise.all([
    page.waitForEvent("download"),
    page.getByText("Download its proof").first().click(),
  ]);
  assert.match(proof.suggestedFilename(), /^toolgate-seq-\d+\.tlog-proof$/);
  const proofPath = path.join(dir, proof.suggestedFilename());
  await proof.saveAs(proofPath);
  const proven = execFileSync(bin, ["verify", "--proof", proofPath, "--key", logKey], {
    encoding: "utf8",
  });
  assert.match(proven, /^proven: seq \d+ \(decision\) is in the tree of \d+ events/);
});

test("an approver approves a waiting call and the agent's Await returns", async () => {
  const deploy = await decide("alice", "deploy", "s-3", { env: "prod" });
  assert.equal(deploy.outcome, "REQUIRE_APPROVAL");
  const awaited = call(approvals, "Await", { decision_id: deploy.decision_id, timeout_ms: 60_000 });
  await page.click("nav >> text=Approvals");
  await page.waitForURL(`${side}/ui/approvals`);
  const card = page.locator("section.approval", { hasText: deploy.decision_id });
  await card.waitFor();
  await card.locator("textarea[name=comment]").fill("prod deploy <b>ok</b> by bob");
  await shot("approvals");
  await card.locator("button[value=approve]").click();
  await page.getByText("Approved: the call of alice to deploy.").waitFor();
  const verdict = await awaited;
  assert.equal(verdict.state, "APPROVED");
  assert.equal(verdict.approver, "bob");
  assert.equal(verdict.comment, "prod deploy <b>ok</b> by bob");
  await assertInert();

  await page.goto(`${side}/ui/story?decision=${deploy.decision_id}`);
  const text = await page.textContent("main");
  assert.match(text, /approved at .* by bob — lets through: allow/);
  assert.ok(text.includes("prod deploy <b>ok</b> by bob"), "the comment, as text");
});

test("an export downloads with its manifest, and toolgate verify accepts both", async () => {
  await page.goto(`${side}/ui/trail?actor=mallory`);
  await page.click("text=Export this");
  await page.waitForURL(/\/ui\/export\?actor=mallory/);
  await shot("export");
  const [csv] = await Promise.all([page.waitForEvent("download"), page.click("text=Download the CSV")]);
  const csvPath = path.join(dir, "export.csv");
  await csv.saveAs(csvPath);
  const [manifest] = await Promise.all([page.waitForEvent("download"), page.click("text=…then its manifest")]);
  const manifestPath = path.join(dir, "export.manifest.json");
  await manifest.saveAs(manifestPath);
  const parsed = JSON.parse(readFileSync(manifestPath, "utf8"));
  assert.equal(parsed.rows, 3);
  assert.equal(parsed.filter.actor_id, "mallory");
  execFileSync(bin, ["verify", "--csv", csvPath, "--manifest", manifestPath, "--db", trailDb]);

  await page.fill("input[name=from]", "1");
  await page.click("form[action='/ui/verify'] button");
  await page.waitForURL(/\/ui\/verify/);
  await page.getByText("✓ Intact").waitFor();
  await assertInert();
  await shot("verify");
});

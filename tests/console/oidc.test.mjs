// The console's sign-in through an identity provider, in a real browser: Debian's Chromium,
// driven by playwright-core, against the real `toolgate serve` and a real OpenID provider (the
// certified oidc-provider, which scripts/test installs into target/identity-node and names in
// TOOLGATE_TEST_OIDC_PROVIDER). The console is registered with the provider as a client; a
// person signs in with the provider's own login form (authorization code, PKCE, state, nonce),
// reads the trail as the auditor the ID token's roles make them, and signs out; an approver of
// the provider's approves an agent's waiting call, and the trail names both; a person with no
// role is refused, and recorded; a callback this browser did not start is refused; a sign-in
// ends once the provider withdraws its key.
//
// TOOLGATE_BIN is the binary; TOOLGATE_ROOT the repository; CHROMIUM the browser.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync } from "node:fs";
import { createInterface } from "node:readline";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { freePort, serve, until } from "./helpers.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = process.env.TOOLGATE_ROOT ?? path.resolve(here, "../..");
const bin = process.env.TOOLGATE_BIN ?? path.join(root, "target/debug/toolgate");
const browserPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const providerScript = process.env.TOOLGATE_TEST_OIDC_PROVIDER;
const shots = path.resolve(root, process.env.TOOLGATE_SCREENSHOTS ?? "target/console-screenshots");

let dir, server, provider, issuer, browser, side, trailDb, grpcAddress;
const AGENT = "agent-token-0c4e";
// The embedded default policy, and deploys wait for a person.
const POLICY = `${readFileSync(path.join(root, "src/policy/default.cedar"), "utf8")}
@outcome("require_approval")
forbid (principal, action == Action::"release.deploy", resource);
`;
const sha256 = (text) => execFileSync("sha256sum", { input: text }).toString().split(" ")[0];
const troubles = [];

before(async () => {
  assert.ok(providerScript, "TOOLGATE_TEST_OIDC_PROVIDER is not set: run scripts/test, which installs oidc-provider");
  dir = mkdtempSync(path.join(tmpdir(), "toolgate-oidc-"));
  mkdirSync(shots, { recursive: true });
  provider = spawn("node", [providerScript], { stdio: ["ignore", "pipe", "ignore"] });
  const first = await new Promise((resolve) =>
    createInterface({ input: provider.stdout }).once("line", (line) => resolve(JSON.parse(line))),
  );
  issuer = first.issuer;
  const [grpcPort, httpPort] = [await freePort(), await freePort()];
  side = `http://127.0.0.1:${httpPort}`;
  grpcAddress = `127.0.0.1:${grpcPort}`;
  writeFileSync(path.join(dir, "policy.cedar"), POLICY);
  // The console, registered as the provider's client (dynamic client registration).
  const registered = await fetch(`${issuer}/reg`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      redirect_uris: [`${side}/ui/oidc/callback`],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    }),
  }).then((r) => r.json());
  assert.ok(registered.client_id, JSON.stringify(registered));
  trailDb = path.join(dir, "trail.db");
  writeFileSync(
    path.join(dir, "toolgate.toml"),
    `listen = "127.0.0.1:${grpcPort}"
http_listen = "127.0.0.1:${httpPort}"
db = "${trailDb}"
policy = "${path.join(dir, "policy.cedar")}"

[console]
enabled = true

[tools.deploy]
safety = "read_only"
action = "release.deploy"

[[auth.tokens]]
id = "agents"
sha256 = "${sha256(AGENT)}"
roles = ["agent"]
actors = ["*"]

[console.oidc]
issuer = "${issuer}"
client_id = "${registered.client_id}"
redirect_uri = "${side}/ui/oidc/callback"

[[auth.issuers]]
issuer = "${issuer}"
audiences = ["urn:toolgate"]
refresh_seconds = 1
`,
  );
  server = await serve(bin, path.join(dir, "toolgate.toml"), side, {
    TOOLGATE_CONSOLE_CLIENT_SECRET: registered.client_secret,
  });
  browser = await chromium.launch({ executablePath: browserPath, args: ["--no-sandbox"] });
});

after(async () => {
  await browser?.close();
  server?.kill("SIGTERM");
  provider?.kill();
  if (server) await new Promise((r) => server.once("exit", r));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A fresh browser: signs in as `login` at the provider, from the console's sign-in page. */
async function signIn(login) {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on("dialog", (d) => troubles.push(`dialog: ${d.message()}`));
  page.on("pageerror", (e) => troubles.push(`script error: ${e.message}`));
  await page.goto(`${side}/ui/trail`);
  assert.match(page.url(), /\/ui\/sign-in\?next=%2Fui%2Ftrail$/);
  await page.click("text=Sign in with your identity provider");
  // The provider's own login form (oidc-provider's development interactions).
  await page.waitForSelector("input[name=login]");
  assert.ok(page.url().startsWith(issuer), page.url());
  await page.fill("input[name=login]", login);
  await page.fill("input[name=password]", "any");
  await page.click("button[type=submit]");
  await page.waitForLoadState("networkidle");
  return { context, page };
}

test("a person signs in through the provider, reads as the auditor their roles make them, and signs out", async () => {
  const { context, page } = await signIn("dave");
  await page.waitForURL(`${side}/ui/trail`);
  const text = await page.textContent("body");
  assert.ok(text.includes(`jwt:${issuer}#dave`), "the console names who signed in");
  await page.screenshot({ path: path.join(shots, "oidc-signed-in.png"), fullPage: true });
  // The trail records the sign-in's reads as the person: nothing is refused.
  await page.goto(`${side}/ui`);
  assert.equal(await page.locator("text=Refused").count(), 0);
  await page.click("button:has-text('Sign out')");
  await page.waitForURL(/\/ui\/sign-in/);
  await page.goto(`${side}/ui/trail`);
  assert.match(page.url(), /\/ui\/sign-in/, "signed out, the trail needs a sign-in again");
  await context.close();
  assert.deepEqual(troubles, []);
});

test("an approver of the provider's approves a waiting call, and the trail names them", async () => {
  const asked = spawnSync(bin, ["decide", "--server", grpcAddress, "--tool", "deploy", "--actor", "alice"], {
    env: { ...process.env, TOOLGATE_TOKEN: AGENT },
  });
  assert.match(asked.stdout.toString(), /require_approval/i, asked.stderr.toString());
  const { context, page } = await signIn("carol");
  // An approver who may not read the trail starts on the approvals.
  await page.waitForURL(`${side}/ui/approvals`);
  const card = page.locator("section.approval", { hasText: "alice" });
  await card.waitFor();
  await card.locator("button[value=approve]").click();
  await page.getByText("Approved: the call of alice to deploy.").waitFor();
  await context.close();
  const approved = JSON.parse(
    execFileSync(bin, ["query", "--db", trailDb, "--json", "--kind", "approval_approved"]).toString(),
  );
  assert.equal(approved.actor_id, "carol");
  assert.equal(JSON.parse(approved.request).identity, `jwt:${issuer}#carol`);
  const decided = JSON.parse(
    execFileSync(bin, ["query", "--db", trailDb, "--json", "--kind", "decision", "--tool", "deploy"]).toString(),
  );
  assert.equal(JSON.parse(decided.request).identity, "agents");
});

test("a person the provider knows but with no role is refused, and the refusal recorded", async () => {
  const { context, page } = await signIn("erin");
  const text = await page.textContent("body");
  assert.match(text, /not signed in: .*roles do not include/);
  await page.goto(`${side}/ui/trail`);
  assert.match(page.url(), /\/ui\/sign-in/);
  await context.close();
  const denied = execFileSync(bin, ["query", "--db", trailDb, "--json", "--kind", "access_denied"]).toString();
  assert.ok(denied.includes(`jwt:${issuer}#erin`), denied);
});

test("a callback this browser did not start is refused, and says nothing it was sent", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const answer = await page.goto(`${side}/ui/oidc/callback?code=stolen&state=${"a".repeat(64)}`);
  assert.equal(answer.status(), 403);
  assert.match(await page.textContent("body"), /not started here/);
  const spoofed = await page.goto(`${side}/ui/oidc/callback?error=call+0800-SCAM&state=x`);
  assert.equal(spoofed.status(), 403);
  assert.ok(!(await page.textContent("body")).includes("SCAM"));
  await context.close();
});

test("an answer without the provider's name is refused, as the provider says it names itself", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  // A sign-in started here, answered by someone else: the right state, no `iss` (RFC 9207).
  const asked = page.waitForRequest((request) => request.url().startsWith(`${issuer}/auth`));
  await page.goto(`${side}/ui/oidc/start`);
  const state = new URL((await asked).url()).searchParams.get("state");
  const answer = await page.goto(`${side}/ui/oidc/callback?code=forged&state=${state}`);
  assert.equal(answer.status(), 403);
  assert.match(await page.textContent("body"), /not the provider's own \(iss\)/);
  await context.close();
});

test("a sign-in ends when the provider withdraws the key that signed its ID token", async () => {
  const { context, page } = await signIn("dave");
  await page.waitForURL(`${side}/ui/trail`);
  process.kill(provider.pid, "SIGUSR1");
  // The keys are fetched again in the background once they are a second old.
  await until("the session's end", async () => {
    await page.goto(`${side}/ui/trail`);
    return /\/ui\/sign-in/.test(page.url());
  });
  await context.close();
  const denied = execFileSync(bin, ["query", "--db", trailDb, "--json", "--kind", "access_denied"]).toString();
  assert.ok(denied.includes("no longer publishes the key of this sign-in"), denied);
});

// The end-to-end browser suite: the real hearth binary, a fake model
// provider that replays recorded wire framing (fake-upstream.mjs), and
// headless Debian Chromium driven by playwright-core. One user journey:
// sign-up → chat → streamed answer → regenerate → branches → reload
// mid-stream → search → a 2,000-message chat → settings (dark theme) →
// 390 px → admin adds a connection → edit as a branch → a pending user
// approved by the admin → a file attached and cited. A screenshot after each step goes to test-results/e2e/; on a
// failure the page (png + html) and hearth's log are kept there too.
//
// Environment:
//   HEARTH_BIN     the binary to test (default: go build -o test-results/hearth .)
//   BASE_URL       where the browser goes (default: the binary itself); set it
//                  to a Vite dev server (npx vite, proxied to HEARTH_PORT)
//   HEARTH_PORT    the binary's port (default: a free one; needed with BASE_URL)
//   CHROMIUM       the browser (default /usr/bin/chromium)
//   FAKE_CHUNKS, FAKE_INTERVAL_MS   the fake's stream shape (default 20 × 150 ms)
//   E2E_SKIP_ADMIN=1   skip the admin step (for a UI without the admin panel;
//                      CI never sets it)
//   E2E_TIMEOUT_MS     per-wait timeout (default 15000)

import { spawn, execFileSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { answerPieces, startFake } from './fake-upstream.mjs';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const OUT = join(ROOT, 'test-results', 'e2e');
const TIMEOUT = Number(process.env.E2E_TIMEOUT_MS ?? 15000);
const CHUNKS = Number(process.env.FAKE_CHUNKS ?? 20);
const CHROMIUM_FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
// Budgets of the first load (issue 6): 300 KB compressed JS+CSS; the
// time-to-interactive figure is 500 ms, but a shared CI machine is noisy,
// so only 2 s fails and 500 ms-2 s warns.
const BUNDLE_LIMIT = 300 * 1024;
const TTI_GOAL_MS = 500;
const TTI_LIMIT_MS = 2000;

const ADMIN = { name: 'E2E Admin', email: 'admin@example.org', password: 'e2e-password-1' };
const MODEL_A = 'fake-alpha'; // served by the connection hearth starts with
const MODEL_B = 'fake-beta'; // served by the connection the admin adds

const answer = (n) => answerPieces(n, CHUNKS).join('');
const log = (...a) => console.log(...a);

class Failure extends Error {}
function check(cond, msg) {
  if (!cond) throw new Failure(msg);
}

// ---------------------------------------------------------------- hearth

function hearthBinary() {
  if (process.env.HEARTH_BIN) return process.env.HEARTH_BIN;
  const bin = join(ROOT, 'test-results', 'hearth');
  log(`building ${bin} (set HEARTH_BIN to skip)`);
  execFileSync('go', ['build', '-o', bin, '.'], { cwd: ROOT, stdio: 'inherit' });
  return bin;
}

const delay = (ms) => new Promise((r) => setTimeout(r, ms));

/** Starts hearth on a fresh DATA_DIR; resolves once GET /health answers 200. */
async function startHearth(bin, upstream) {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-e2e-'));
  const logPath = join(OUT, 'hearth.log');
  const logFile = createWriteStream(logPath);
  const port = process.env.HEARTH_PORT ?? '0';
  const env = {
    ...process.env,
    WEBUI_SECRET_KEY: 'e2e-secret-key',
    ENABLE_OLLAMA_API: 'false',
    OPENAI_API_BASE_URLS: upstream.url,
    OPENAI_API_KEYS: 'e2e-key-a',
  };
  const child = spawn(bin, ['serve', '--host', '127.0.0.1', '--port', port, '--data-dir', dataDir, '--log-format', 'json'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let text = '';
  let exited = null;
  child.stderr.on('data', (b) => {
    logFile.write(b);
    text += b;
  });
  child.on('exit', (code, sig) => (exited = sig ?? code));
  const stop = async () => {
    if (exited === null) {
      // Bounded wait for a graceful stop, then SIGKILL.
      let watchdog;
      const exit = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exit, new Promise((r) => (watchdog = setTimeout(r, 20000)))]);
      clearTimeout(watchdog);
      if (exited === null) child.kill('SIGKILL');
    }
    logFile.end();
    rmSync(dataDir, { recursive: true, force: true });
  };

  // The server logs {"addr":"127.0.0.1:N"} once it listens (port 0 = free port).
  const deadline = Date.now() + 30000;
  let addr = '';
  while (Date.now() < deadline) {
    if (exited !== null) {
      await stop();
      throw new Failure(`hearth exited during start-up (${exited}); log: ${logPath}\n${text}`);
    }
    addr ||= text.match(/"addr":"([^"]+)"/)?.[1] ?? '';
    if (addr) {
      const ok = await fetch(`http://${addr}/health`).then((r) => r.status === 200, () => false);
      if (ok) return { url: `http://${addr}`, stop, logPath };
    }
    await delay(100); // poll (bounded by the deadline)
  }
  await stop();
  throw new Failure(`hearth did not answer GET /health within 30 s; log: ${logPath}`);
}

// ---------------------------------------------------------------- page probes

// Runs in the page before any of its scripts, on every navigation: records
// the moment the composer is usable (time to interactive, ms since
// navigation start) and every length the last answer's text went through,
// so the suite sees it grow without polling on a timer.
function probe() {
  const e2e = (window.__e2e = { tti: null, lengths: [] });
  const answerText = () => {
    const last = [...document.querySelectorAll('article')].at(-1);
    return last?.innerText.match(/Answer \d+[^\n]*/)?.[0] ?? '';
  };
  const look = () => {
    if (e2e.tti === null) {
      const c = document.querySelector('textarea[aria-label="Message"]');
      if (c && !c.disabled && c.getClientRects().length) e2e.tti = performance.now();
    }
    const len = answerText().length;
    if (len !== e2e.lengths.at(-1)) e2e.lengths.push(len);
  };
  const start = () => {
    new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    look();
  };
  if (document.body) start();
  else addEventListener('DOMContentLoaded', start);
}

// ---------------------------------------------------------------- the suite

const results = [];
let running = '(start-up)';
let shot = 0;

async function main() {
  rmSync(OUT, { recursive: true, force: true }); // no screenshot of an earlier run left behind
  mkdirSync(OUT, { recursive: true });
  if (process.env.BASE_URL && !process.env.HEARTH_PORT) throw new Failure('BASE_URL needs HEARTH_PORT (the port the dev server proxies to)');
  const bin = hearthBinary();
  const undo = []; // what to stop at the end, last started first
  try {
    const fakeA = await startFake({ models: [MODEL_A] });
    undo.push(() => fakeA.close());
    const fakeB = await startFake({ models: [MODEL_B] });
    undo.push(() => fakeB.close());
    const hearth = await startHearth(bin, fakeA);
    undo.push(() => hearth.stop());
    const base = process.env.BASE_URL ?? hearth.url;
    log(`hearth ${hearth.url}, browser at ${base}, fake upstreams ${fakeA.url} ${fakeB.url}`);
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
      args: CHROMIUM_FLAGS,
      timeout: 30000,
    });
    undo.push(() => browser.close());
    await journey({ browser, base, fakeA, fakeB, hearth });
  } finally {
    for (const stop of undo.reverse()) await stop().catch((e) => log(`(cleaning up: ${e})`));
  }
}

async function journey({ browser, base, fakeA, fakeB, hearth }) {
  const context = await browser.newContext({ baseURL: base, viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(TIMEOUT);
  await context.addInitScript(probe);
  const page = await context.newPage();
  const pageErrors = [];
  const consoleErrors = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  // (Printed on a failure only: the signed-out boot's 401 is expected.)
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));

  const snap = async (name) => {
    shot += 1;
    await page.screenshot({ path: join(OUT, `${String(shot).padStart(2, '0')}-${name}.png`) });
  };
  const step = async (name, fn) => {
    running = name;
    const t0 = Date.now();
    await fn();
    check(pageErrors.length === 0, `uncaught errors in the page:\n${pageErrors.join('\n')}`);
    await snap(name);
    results.push(name);
    log(`ok   ${name} (${Date.now() - t0} ms)`);
  };
  const desktop = () => page.setViewportSize({ width: 1280, height: 800 });

  const ctx = { page, browser, base, fakeA, fakeB, snap };
  try {
    await step('sign-up', () => signUp(ctx));
    await step('first-load', () => firstLoad(ctx));
    await step('chat-streams', () => chatStreams(ctx));
    await step('regenerate', () => regenerate(ctx));
    await step('branches', () => branches(ctx));
    await step('reload-mid-stream', () => reloadMidStream(ctx));
    await step('search', () => search(ctx));
    await step('long-chat', () => longChat(ctx));
    await step('dark-theme', () => theme(ctx, 'Dark'));
    await step('mobile-dark', () => mobile(ctx, 'mobile-dark'));
    await step('light-theme', () => desktop().then(() => theme(ctx, 'Light')));
    await step('mobile-light', () => mobile(ctx, 'mobile-light'));
    await desktop();
    if (process.env.E2E_SKIP_ADMIN === '1') log('skip admin-connection (E2E_SKIP_ADMIN=1)');
    else {
      await step('admin-connection', () => adminAddsConnection(ctx));
      await step('chat-new-model', () => chatWithNewModel(ctx));
      await step('edit-branch', () => editBranch(ctx));
      await step('pending-user', () => pendingUser(ctx));
      await step('attach-file', () => attachFile(ctx));
    }
  } catch (e) {
    for (const m of consoleErrors) log(`  [browser console] ${m}`);
    await keepEvidence(page, hearth).catch((err) => log(`(could not save the failure evidence: ${err})`));
    throw e;
  }
}

async function keepEvidence(page, hearth) {
  await page.screenshot({ path: join(OUT, 'failure.png'), fullPage: true });
  writeFileSync(join(OUT, 'failure.html'), await page.content());
  log(`failure evidence: ${join(OUT, 'failure.png')}, failure.html, ${hearth.logPath}`);
}

// ---------------------------------------------------------------- steps

async function signUp({ page }) {
  await page.goto('/');
  // The first account of an instance is its admin (onboarding form).
  await page.getByRole('heading', { name: /^Sign up/ }).waitFor();
  await page.getByLabel('Name', { exact: true }).fill(ADMIN.name);
  await page.getByLabel('Email', { exact: true }).fill(ADMIN.email);
  await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
  const confirm = page.getByLabel('Confirm password', { exact: true });
  if (await confirm.count()) await confirm.fill(ADMIN.password);
  await page.getByRole('button', { name: 'Create admin account', exact: true }).click();
  await page.getByRole('textbox', { name: 'Message', exact: true }).waitFor();
  // The session (the HttpOnly cookie sign-up set) is the first user's: an admin.
  const me = await page.evaluate(() => fetch('/api/v1/auths/').then((r) => r.json()));
  check(me.role === 'admin', `the first account is ${me.role}, not admin`);
}

/** Reload signed in: time to interactive and the size of the first load. */
async function firstLoad({ page, base }) {
  await page.reload();
  await page.waitForFunction(() => window.__e2e?.tti != null);
  const tti = Math.round(await page.evaluate(() => window.__e2e.tti));

  // First-load JS+CSS: what index.html names plus whatever the page
  // fetched by the time it was interactive, each gzip-ed (hearth serves
  // them uncompressed; a proxy in front would compress).
  const html = await (await fetch(new URL('/', base))).text();
  const urls = new Set([...html.matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map((m) => new URL(m[1], base).href));
  const loaded = await page.evaluate(() =>
    performance.getEntriesByType('resource').map((e) => e.name).filter((n) => /\.(js|css)(\?|$)/.test(n)),
  );
  for (const u of loaded) urls.add(u);
  let raw = 0;
  let gz = 0;
  for (const u of urls) {
    const b = Buffer.from(await (await fetch(u)).arrayBuffer());
    raw += b.length;
    gz += gzipSync(b, { level: 9 }).length;
  }
  const kb = (n) => (n / 1024).toFixed(1);
  log(`  first load: ${urls.size} JS/CSS files, ${kb(raw)} KB raw, ${kb(gz)} KB gzip (limit ${kb(BUNDLE_LIMIT)} KB)`);
  log(`  time to interactive: ${tti} ms (goal ${TTI_GOAL_MS} ms, limit ${TTI_LIMIT_MS} ms)`);
  writeFileSync(join(OUT, 'metrics.json'), JSON.stringify({ tti_ms: tti, first_load_files: urls.size, first_load_raw_bytes: raw, first_load_gzip_bytes: gz }, null, 2) + '\n');
  if (process.env.BASE_URL) {
    log('  (dev server: budgets not enforced)');
    return;
  }
  check(gz <= BUNDLE_LIMIT, `first-load JS+CSS is ${kb(gz)} KB gzip, over the ${kb(BUNDLE_LIMIT)} KB budget`);
  check(tti <= TTI_LIMIT_MS, `time to interactive ${tti} ms is over ${TTI_LIMIT_MS} ms`);
  if (tti > TTI_GOAL_MS) log(`  WARNING: time to interactive ${tti} ms is over the ${TTI_GOAL_MS} ms goal`);
}

const lastArticle = (page) => page.getByRole('article').last();

/** Waits until the last message is answer n, complete (its Regenerate button is there). */
async function answerDone(page, n) {
  const last = lastArticle(page);
  await last.getByText(answer(n), { exact: false }).waitFor();
  await last.getByRole('button', { name: 'Regenerate', exact: true }).waitFor();
}

/** The lengths the last answer's text went through (the probe's record). */
const lengths = (page) => page.evaluate(() => window.__e2e.lengths.slice());

async function chatStreams({ page }) {
  await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption(MODEL_A);
  const composer = page.getByRole('textbox', { name: 'Message', exact: true });
  await composer.fill('hello');
  await page.evaluate(() => (window.__e2e.lengths = []));
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await answerDone(page, 1);
  await page.waitForURL(/\/c\/[^/]+$/);
  const full = answer(1).length;
  const partial = new Set((await lengths(page)).filter((l) => l > 0 && l < full));
  check(partial.size >= 2, `the answer did not appear progressively: lengths seen ${JSON.stringify(await lengths(page))}`);
  log(`  answer grew through ${partial.size} partial lengths before ${full}`);
  await page.getByRole('article').filter({ hasText: 'hello' }).first().waitFor();
}

async function regenerate({ page }) {
  await lastArticle(page).getByRole('button', { name: 'Regenerate', exact: true }).click();
  await answerDone(page, 2);
  await lastArticle(page).getByText('2/2', { exact: true }).waitFor();
  const text = await lastArticle(page).innerText();
  check(!text.includes(answer(1)), 'the regenerated answer still shows the first answer');
}

async function branches({ page }) {
  await lastArticle(page).getByRole('button', { name: 'Previous version', exact: true }).click();
  await lastArticle(page).getByText('1/2', { exact: true }).waitFor();
  await lastArticle(page).getByText(answer(1)).waitFor();
  check(!(await lastArticle(page).innerText()).includes(answer(2)), 'branch 1/2 still shows answer 2');
}

async function reloadMidStream({ page, fakeA, snap }) {
  // Hold the next answer after a few pieces: the reload happens while it
  // is certainly still streaming, however slow the machine is.
  const gate = fakeA.hold(4);
  await page.getByRole('textbox', { name: 'Message', exact: true }).fill('tell me more');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  const held = answerPieces(3, CHUNKS).slice(0, 4).join('');
  await lastArticle(page).getByText(held).waitFor();
  await page.getByRole('button', { name: 'Stop', exact: true }).waitFor(); // still generating
  const url = page.url();
  await page.reload();
  check(page.url() === url, `the reload left the chat (${url} → ${page.url()})`);
  // After the reload the page shows what was generated so far, still going…
  await lastArticle(page).getByText(held).waitFor();
  await page.getByRole('button', { name: 'Stop', exact: true }).waitFor();
  await snap('reloaded-while-streaming');
  const before = (await lengths(page)).at(-1);
  gate.release();
  // …and keeps growing to the end.
  await answerDone(page, 3);
  const seen = await lengths(page);
  const grew = seen.filter((l) => l > before && l < answer(3).length);
  check(grew.length >= 1, `after the reload the answer did not grow progressively: lengths ${JSON.stringify(seen)}`);
  // The earlier exchange is still there, on the branch we chose.
  // (First: the answer's suggested follow-ups may quote the question too.)
  await page.getByRole('article').filter({ hasText: 'tell me more' }).first().waitFor();
}

async function search({ page }) {
  const nav = page.getByRole('navigation', { name: 'Chats', exact: true });
  const box = nav.getByRole('searchbox', { name: 'Search chats', exact: true });
  await box.fill('qqxyzzy');
  await nav.getByText(/No match/i).waitFor();
  // "lanterns" is only in the answers, never in a title.
  await box.fill('lanterns');
  const hit = nav.getByRole('button', { name: /Zephyr greeting/ });
  await hit.waitFor();
  await box.fill('');
  await page.getByRole('button', { name: 'New chat', exact: true }).click();
  await page.waitForURL((u) => u.pathname === '/');
  await box.fill('lanterns');
  await hit.click();
  await page.waitForURL(/\/c\/[^/]+$/);
  await page.getByRole('heading', { name: 'Zephyr greeting', exact: true }).waitFor();
  await lastArticle(page).getByText(answer(3)).waitFor();
  await box.fill('');
}

// A 2,000-message chat (issue 6 figure): it opens with its last message on
// screen and scrolls to the top and back without long frames. The numbers
// go to metrics.json; only a gross failure fails (a shared CI machine is
// noisy): opening in over 5 s or a p95 frame over 100 ms.
const LONG_CHAT = 2000;
async function longChat({ page }) {
  const back = page.url();
  const id = await page.evaluate(async (n) => {
    const messages = {};
    const md = 'Some **bold** text, `code` and a list:\n\n- one\n- two\n\n```js\nconst x = 1;\n```\n';
    for (let i = 0; i < n; i++) {
      messages['m' + i] = { id: 'm' + i, parentId: i ? 'm' + (i - 1) : null, childrenIds: i + 1 < n ? ['m' + (i + 1)] : [],
        role: i % 2 ? 'assistant' : 'user', content: i % 2 ? `Answer ${i}. ${md}` : `Question ${i}?`, timestamp: 1700000000 + i, done: true };
    }
    const r = await fetch('/api/v1/chats/new', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ chat: { title: 'Long chat', models: [], messages: Object.values(messages), history: { currentId: 'm' + (n - 1), messages } } }) });
    if (!r.ok) throw new Error(`create: ${r.status} ${await r.text()}`);
    return (await r.json()).id;
  }, LONG_CHAT);
  const t0 = Date.now();
  await page.goto(`/c/${id}`);
  await lastArticle(page).getByText(`Answer ${LONG_CHAT - 1}.`).waitFor();
  const openMs = Date.now() - t0;
  const scroll = await page.evaluate(async () => {
    const s = document.querySelector('.messages');
    const frame = () => new Promise((r) => requestAnimationFrame(r));
    const gaps = [];
    let last = performance.now();
    let run = true;
    const tick = (t) => { gaps.push(t - last); last = t; if (run) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
    // Up to the first message (each page above is revealed on the way), then down again.
    for (let i = 0; i < 2000 && (s.scrollTop > 0 || document.body.textContent.includes('Show earlier')); i++) {
      s.scrollTop = Math.max(0, s.scrollTop - 600);
      await frame();
    }
    const top = document.querySelector('.msg')?.textContent ?? '';
    while (s.scrollTop + s.clientHeight < s.scrollHeight - 2) { s.scrollTop += 3000; await frame(); }
    run = false;
    gaps.sort((a, b) => a - b);
    const q = (p) => Math.round(gaps[Math.min(gaps.length - 1, Math.floor(gaps.length * p))]);
    return { frames: gaps.length, p50: q(0.5), p95: q(0.95), max: q(1), reachedFirst: top.includes('Question 0?'), domMessages: document.querySelectorAll('.msg').length };
  });
  log(`  ${LONG_CHAT}-message chat: opened in ${openMs} ms; scrolling top and back: ${scroll.frames} frames, p50 ${scroll.p50} ms, p95 ${scroll.p95} ms, max ${scroll.max} ms`);
  const metrics = join(OUT, 'metrics.json');
  const prev = existsSync(metrics) ? JSON.parse(readFileSync(metrics, 'utf8')) : {};
  writeFileSync(metrics, JSON.stringify({ ...prev, long_chat: { messages: LONG_CHAT, open_ms: openMs, ...scroll } }, null, 2) + '\n');
  check(scroll.reachedFirst, 'scrolling up did not reach the first message');
  check(openMs <= 5000, `the ${LONG_CHAT}-message chat took ${openMs} ms to open`);
  check(scroll.p95 <= 100, `scrolling the ${LONG_CHAT}-message chat: p95 frame ${scroll.p95} ms`);
  // Back to the chat the next steps look at.
  await page.goto(back);
  await lastArticle(page).waitFor();
}

async function theme({ page }, name) {
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Settings', exact: true });
  await dialog.getByRole('radio', { name }).check();
  await page.waitForFunction((t) => document.documentElement.dataset.theme === t, name.toLowerCase());
  await dialog.getByRole('button', { name: 'Close settings', exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const [r, g, b] = bg.match(/\d+/g).map(Number);
  const dark = (r + g + b) / 3 < 128;
  check(dark === (name === 'Dark'), `the ${name} theme paints the page ${bg}`);
}

async function mobile({ page, snap }, name) {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByRole('textbox', { name: 'Message', exact: true }).waitFor();
  await lastArticle(page).waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
  check(overflow <= 0, `at 390 px the page scrolls sideways by ${overflow} px`);
  // The sidebar is a drawer there: the menu button slides it in, the scrim
  // beside it (right of the drawer) closes it.
  // beside it (right of the drawer) closes it. (Each wait lets the slide
  // finish, so the screenshots show where it ends.)
  const drawerAt = (open) =>
    page.waitForFunction((open) => {
      const n = document.querySelector('nav[aria-label="Chats"]');
      const r = n.getBoundingClientRect();
      return (open ? r.left === 0 : r.right <= 0) && !n.getAnimations().length;
    }, open);
  await drawerAt(false);
  await page.getByRole('button', { name: 'Open menu', exact: true }).click();
  await drawerAt(true);
  await snap(`${name}-drawer`);
  await page.getByRole('button', { name: 'Close menu', exact: true }).click({ position: { x: 370, y: 400 } });
  await drawerAt(false);
}

// The admin panel's labels this step relies on (issue 6 asks for "admin
// adds a connection"): the sidebar's "Admin" button opens a dialog named
// "Admin…" with a "Connections" tab; its OpenAI region (a section labelled
// "OpenAI…") has an "Add connection" button that adds a row with inputs
// labelled "URL n" and "API key n", a "Verify" button per row that shows
// "Connected…" as a status, and a "Save…" button that shows "Saved" as a
// status; "Close…" closes the dialog.
async function adminAddsConnection({ page, fakeB, snap }) {
  await page.getByRole('button', { name: 'Admin', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: /^Admin/ });
  await dialog.getByRole('tab', { name: 'Connections', exact: true }).click();
  const openai = dialog.getByRole('region', { name: /OpenAI/ });
  // The connection hearth started with is listed first.
  await openai.getByRole('textbox', { name: /^URL\b/ }).first().waitFor();
  await openai.getByRole('button', { name: 'Add connection', exact: true }).click();
  await openai.getByRole('textbox', { name: /^URL\b/ }).last().fill(fakeB.url);
  await openai.getByLabel(/^API key\b/).last().fill('e2e-key-b');
  await openai.getByRole('button', { name: 'Verify', exact: true }).last().click();
  await openai.getByRole('status').filter({ hasText: /Connected/ }).waitFor();
  await snap('admin-verified');
  await openai.getByRole('button', { name: /^Save/ }).click();
  await openai.getByRole('status').filter({ hasText: /Saved/ }).waitFor();
  await dialog.getByRole('button', { name: /^Close/ }).click();
  await dialog.waitFor({ state: 'detached' });
  // App re-reads the models after an admin change: the picker lists the new one.
  const picker = page.getByRole('combobox', { name: 'Model', exact: true });
  await picker.locator(`option[value="${MODEL_B}"]`).waitFor({ state: 'attached' });
}

async function chatWithNewModel({ page, fakeB }) {
  await page.getByRole('button', { name: 'New chat', exact: true }).click();
  await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption(MODEL_B);
  await page.getByRole('textbox', { name: 'Message', exact: true }).fill('hi beta');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await answerDone(page, 1); // the second provider's first answer
  check(fakeB.requests === 1, `the new connection streamed ${fakeB.requests} answers, not 1`);
}

/** Editing a user message sends the new text as a sibling branch (‹ 1/2 › on the question). */
async function editBranch({ page, fakeA }) {
  await page.getByRole('button', { name: 'New chat', exact: true }).click();
  await page.waitForURL((u) => u.pathname === '/');
  await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption(MODEL_A);
  const composer = page.getByRole('textbox', { name: 'Message', exact: true });
  await composer.fill('first draft');
  const n = fakeA.requests + 1; // the number of the answer this send starts
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await answerDone(page, n);
  const question = (text) => page.getByRole('article').filter({ hasText: text });
  await question('first draft').getByRole('button', { name: 'Edit', exact: true }).click();
  await composer.fill('second draft');
  await composer.press('Enter'); // Enter sends
  await answerDone(page, n + 1);
  await question('second draft').getByText('2/2', { exact: true }).waitFor();
  await question('second draft').getByRole('button', { name: 'Previous version', exact: true }).click();
  await question('first draft').getByText('1/2', { exact: true }).waitFor();
  await lastArticle(page).getByText(answer(n)).waitFor();
}

/**
 * A second person signs up (DEFAULT_USER_ROLE pending): they see the pending
 * screen until the admin makes them a user in Admin → Users; "Check again"
 * then lets them in.
 */
async function pendingUser({ page, browser, base, snap }) {
  const other = await browser.newContext({ baseURL: base, viewport: { width: 390, height: 844 } });
  try {
    const p2 = await other.newPage();
    await p2.goto('/');
    await p2.getByRole('button', { name: 'Sign up', exact: true }).click();
    await p2.getByLabel('Name', { exact: true }).fill('Second Person');
    await p2.getByLabel('Email', { exact: true }).fill('second@example.org');
    await p2.getByLabel('Password', { exact: true }).fill('e2e-password-2');
    const confirm = p2.getByLabel('Confirm password', { exact: true });
    if (await confirm.count()) await confirm.fill('e2e-password-2');
    await p2.getByRole('button', { name: 'Create account', exact: true }).click();
    await p2.getByRole('button', { name: 'Check again', exact: true }).waitFor();
    await p2.screenshot({ path: join(OUT, 'pending-screen.png') });

    await page.getByRole('button', { name: 'Admin', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: /^Admin/ });
    await dialog.getByRole('tab', { name: 'Users', exact: true }).click();
    await dialog.getByRole('combobox', { name: 'Role of Second Person', exact: true }).selectOption('user');
    await snap('admin-approves');
    await dialog.getByRole('button', { name: /^Close/ }).click();
    await dialog.waitFor({ state: 'detached' });
    // The server has the new role before the second person checks again.
    await page.waitForFunction(async () => {
      const r = await fetch('/api/v1/users/?query=second');
      const j = await r.json();
      const list = Array.isArray(j) ? j : j.users ?? [];
      return list.some((u) => u.email === 'second@example.org' && u.role === 'user');
    });

    await p2.getByRole('button', { name: 'Check again', exact: true }).click();
    await p2.getByRole('textbox', { name: 'Message', exact: true }).waitFor();
    await p2.screenshot({ path: join(OUT, 'approved-user.png') });
  } finally {
    await other.close();
  }
}

/**
 * A text file attached in the composer is uploaded and processed; the
 * question goes out with the file's text as a source (the provider sees
 * it in the prompt) and the answer lists the file under "Sources".
 */
async function attachFile({ page, fakeA }) {
  await page.getByRole('button', { name: 'New chat', exact: true }).click();
  await page.waitForURL((u) => u.pathname === '/');
  await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption(MODEL_A);
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Attach files', exact: true }).click();
  const note = 'The lighthouse keeper feeds the gulls at seven.';
  await (await chooser).setFiles({ name: 'keeper-notes.txt', mimeType: 'text/plain', buffer: Buffer.from(note) });
  const chips = page.getByRole('list', { name: 'Attachments', exact: true });
  await chips.getByText('keeper-notes.txt').waitFor();
  const send = page.getByRole('button', { name: 'Send', exact: true });
  await page.getByRole('textbox', { name: 'Message', exact: true }).fill('When are the gulls fed?');
  await page.waitForFunction(() => {
    const b = [...document.querySelectorAll('button')].find((x) => x.textContent?.trim() === 'Send');
    return b && !b.disabled; // enabled once the file is processed
  });
  const n = fakeA.requests + 1;
  await send.click();
  await answerDone(page, n);
  const prompt = JSON.stringify(fakeA.lastPrompt ?? []);
  check(prompt.includes(note), `the provider was not given the file's text: ${prompt.slice(0, 300)}`);
  const answerBox = lastArticle(page);
  await answerBox.getByText('Sources', { exact: true }).waitFor();
  await answerBox.getByRole('button', { name: /keeper-notes\.txt/ }).click();
  await answerBox.getByRole('region', { name: /keeper-notes\.txt/ }).getByText(note).waitFor();
  // The question keeps its attachment after a reload.
  await page.reload();
  await page.getByRole('article').filter({ hasText: 'When are the gulls fed?' }).getByText('keeper-notes.txt').waitFor();
}

// ---------------------------------------------------------------- run

const started = Date.now();
try {
  await main();
  log(`\ne2e: ${results.length} passed, 0 failed (${((Date.now() - started) / 1000).toFixed(1)} s; screenshots in ${OUT})`);
} catch (e) {
  log(`\nFAIL in step ${running}: ${e instanceof Failure ? e.message : e.stack ?? e}`);
  log(`e2e: ${results.length} passed, 1 failed`);
  process.exitCode = 1;
}

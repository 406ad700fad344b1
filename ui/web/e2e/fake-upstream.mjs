// A fake model provider for the browser suite. It answers with the framing
// recorded from a real Ollama 0.17.4 (llm/testdata/fixtures): the same
// headers, the same JSON objects with their keys in the same order, the
// same "data: …\n\n" / NDJSON line breaks; only the text, ids, model names
// and timestamps change. Streams are slow on purpose (FAKE_CHUNKS pieces,
// FAKE_INTERVAL_MS apart) so the suite can watch an answer grow and reload
// the page in the middle of one. Every streamed answer carries a counter,
// so a regeneration is told apart from the answer it replaces.

import { readFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

const FIXTURES = fileURLToPath(new URL('../../../llm/testdata/fixtures/ollama-0.17.4/', import.meta.url));

/** One recorded exchange's response: status, headers (as recorded) and body text. */
export function readFixture(name) {
  const text = readFileSync(FIXTURES + name, 'utf8');
  const resp = text.slice(text.indexOf('### response\n') + '### response\n'.length);
  const split = resp.indexOf('\n\n');
  const [statusLine, ...headerLines] = resp.slice(0, split).split('\n');
  const headers = {};
  for (const h of headerLines) {
    const i = h.indexOf(':');
    headers[h.slice(0, i).trim()] = h.slice(i + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: resp.slice(split + 2) };
}

/** The JSON payloads of an SSE body ("data: {…}" events), [DONE] left out. */
function sseEvents(body) {
  return body
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .map((e) => JSON.parse(e.slice('data: '.length)));
}

const fx = {
  v1Stream: readFixture('10-v1-chat-stream.http'),
  v1Usage: readFixture('12-v1-chat-stream-usage.http'),
  v1Once: readFixture('11-v1-chat-nostream.http'),
  v1Models: readFixture('14-v1-models.http'),
  tags: readFixture('02-tags.http'),
  version: readFixture('01-version.http'),
  chatStream: readFixture('04-chat-stream.http'),
  chatOnce: readFixture('05-chat-nostream.http'),
  v1NoModel: readFixture('22-v1-error-unknown-model.http'),
  noModel: readFixture('19-error-unknown-model.http'),
};

// Templates taken from the recordings: a content chunk, the finishing
// chunk, the usage chunk (OpenAI SSE); a content line and the done line
// (Ollama NDJSON).
const v1Events = sseEvents(fx.v1Stream.body);
const V1_CHUNK = v1Events[0];
const V1_FINISH = v1Events.find((e) => e.choices[0]?.finish_reason);
const V1_USAGE = sseEvents(fx.v1Usage.body).find((e) => e.usage);
const ndLines = fx.chatStream.body.split('\n').filter(Boolean).map((l) => JSON.parse(l));
const ND_CHUNK = ndLines[0];
const ND_DONE = ndLines.find((l) => l.done);

const clone = (o) => structuredClone(o);

// The words of every answer after "Answer N"; "lanterns" is the word the
// suite searches for (it is in no title).
const WORDS = (
  ' about zephyr lanterns, quiet harbors, and the patient sea that keeps' +
  ' every small boat safe until morning comes home again at last.'
).match(/\s*\S+/g);

/** Answer n, cut into `chunks` pieces whose concatenation is the whole text. */
export function answerPieces(n, chunks) {
  const pieces = [`Answer ${n}`];
  for (let i = 0; pieces.length < chunks; i++) pieces.push(WORDS[i % WORDS.length]);
  return pieces;
}

/** The JSON a background task (title, tags, follow-ups) asks for, by its prompt. */
function taskAnswer(prompt) {
  if (/"follow_ups"/.test(prompt)) return JSON.stringify({ follow_ups: ['Tell me more about lanterns?'] });
  if (/"tags"/.test(prompt)) return JSON.stringify({ tags: ['Harbors'] });
  if (/"title"/.test(prompt)) return JSON.stringify({ title: 'Zephyr greeting' });
  return 'ok';
}

/**
 * Starts a fake provider on 127.0.0.1:port (0 = any free port). models:
 * the ids it lists. Returns { url, port, requests, lastPrompt, hold, close }
 * where requests counts the streamed answers it has begun.
 */
export async function startFake({ port = 0, models = ['fake-alpha'], chunks, intervalMs } = {}) {
  chunks = chunks ?? Number(process.env.FAKE_CHUNKS ?? 20);
  intervalMs = intervalMs ?? Number(process.env.FAKE_INTERVAL_MS ?? 150);
  const state = { requests: 0, gate: null };
  const sockets = new Set();
  const timers = new Set();
  const wait = (ms) =>
    new Promise((r) => {
      const t = setTimeout(() => (timers.delete(t), r()), ms);
      timers.add(t);
    });

  // Replay a recording's headers, less the ones Node computes itself.
  // (a streamed body goes out chunked, as recorded; a JSON body with the
  // Content-Length of the new text).
  const computed = new Set(['date', 'content-length', 'transfer-encoding']);
  const head = (res, f, extra = {}) => {
    const h = Object.entries(f.headers).filter(([k]) => !computed.has(k.toLowerCase()));
    res.writeHead(f.status, { ...Object.fromEntries(h), ...extra });
  };
  const json = (res, f, obj) => {
    const b = Buffer.from(JSON.stringify(obj));
    head(res, f, { 'Content-Length': b.length });
    res.end(b);
  };
  const now = () => Math.floor(Date.now() / 1000);
  const gates = new Set();
  const takeGate = () => {
    const g = state.gate;
    state.gate = null;
    return g;
  };

  async function v1Chat(req, res, body) {
    const model = body.model;
    if (!models.includes(model)) {
      const o = JSON.parse(fx.v1NoModel.body);
      o.error.message = `model '${model}' not found`;
      return json(res, fx.v1NoModel, o);
    }
    if (!body.stream) {
      const o = clone(JSON.parse(fx.v1Once.body));
      o.id = `chatcmpl-task-${now()}`;
      o.created = now();
      o.model = model;
      o.choices[0].message.content = taskAnswer(body.messages?.at(-1)?.content ?? '');
      o.choices[0].finish_reason = 'stop';
      return json(res, fx.v1Once, o);
    }
    const n = ++state.requests;
    state.lastPrompt = body.messages; // what the last streamed answer was asked
    const gate = takeGate();
    const id = `chatcmpl-${n}`;
    head(res, fx.v1Stream);
    const send = (o) => res.write(`data: ${JSON.stringify(o)}\n\n`);
    for (const [i, piece] of answerPieces(n, chunks).entries()) {
      if (i === gate?.after) await gate.opened;
      if (res.destroyed) return;
      const c = clone(V1_CHUNK);
      Object.assign(c, { id, created: now(), model });
      c.choices[0].delta.content = piece;
      send(c);
      await wait(intervalMs);
    }
    const fin = clone(V1_FINISH);
    Object.assign(fin, { id, created: now(), model });
    fin.choices[0].finish_reason = 'stop';
    send(fin);
    if (body.stream_options?.include_usage) {
      const u = clone(V1_USAGE);
      Object.assign(u, { id, created: now(), model });
      u.usage = { prompt_tokens: 12, completion_tokens: chunks, total_tokens: 12 + chunks };
      send(u);
    }
    res.end('data: [DONE]\n\n');
  }

  async function ollamaChat(req, res, body) {
    const model = body.model;
    if (!models.includes(model)) return json(res, fx.noModel, { error: `model '${model}' not found` });
    const stamp = () => new Date().toISOString();
    if (body.stream === false) {
      const o = clone(JSON.parse(fx.chatOnce.body));
      Object.assign(o, { model, created_at: stamp(), done_reason: 'stop' });
      o.message.content = taskAnswer(body.messages?.at(-1)?.content ?? '');
      return json(res, fx.chatOnce, o);
    }
    const n = ++state.requests;
    const gate = takeGate();
    head(res, fx.chatStream);
    for (const [i, piece] of answerPieces(n, chunks).entries()) {
      if (i === gate?.after) await gate.opened;
      if (res.destroyed) return;
      const l = clone(ND_CHUNK);
      Object.assign(l, { model, created_at: stamp() });
      l.message.content = piece;
      res.write(JSON.stringify(l) + '\n');
      await wait(intervalMs);
    }
    const d = clone(ND_DONE);
    Object.assign(d, { model, created_at: stamp(), done_reason: 'stop', eval_count: chunks });
    res.end(JSON.stringify(d) + '\n');
  }

  function route(req, res, body) {
    const path = req.url.split('?')[0];
    if (req.method === 'GET' && path === '/v1/models') {
      const o = clone(JSON.parse(fx.v1Models.body));
      const tpl = o.data[0];
      o.data = models.map((id) => ({ ...tpl, id, created: now() }));
      return json(res, fx.v1Models, o);
    }
    if (req.method === 'GET' && path === '/api/tags') {
      const o = clone(JSON.parse(fx.tags.body));
      const tpl = o.models[0];
      o.models = models.map((id) => ({ ...tpl, name: id, model: id }));
      return json(res, fx.tags, o);
    }
    if (req.method === 'GET' && path === '/api/version') return json(res, fx.version, JSON.parse(fx.version.body));
    if (req.method === 'POST' && path === '/v1/chat/completions') return v1Chat(req, res, body);
    if (req.method === 'POST' && path === '/api/chat') return ollamaChat(req, res, body);
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `no route ${req.method} ${path}` } }));
  }

  const server = http.createServer((req, res) => {
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', () => {
      let body = {};
      try {
        body = parts.length ? JSON.parse(Buffer.concat(parts).toString('utf8')) : {};
      } catch {
        res.writeHead(400, { 'Content-Type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: 'invalid JSON' } }));
      }
      Promise.resolve(route(req, res, body)).catch((e) => res.destroy(e));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const actual = server.address().port;
  return {
    url: `http://127.0.0.1:${actual}/v1`,
    port: actual,
    get requests() {
      return state.requests;
    },
    /** the messages of the last streamed chat request (OpenAI format) */
    get lastPrompt() {
      return state.lastPrompt;
    },
    /**
     * The next streamed answer stops after `after` pieces until release():
     * the suite acts while an answer is certainly mid-stream.
     */
    hold(after) {
      let release;
      const opened = new Promise((r) => (release = r));
      state.gate = { after, opened };
      gates.add(release);
      return { release };
    },
    close() {
      for (const release of gates) release();
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

// `node fake-upstream.mjs [port] [model…]` runs one alone (for manual checks).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [p, ...ids] = process.argv.slice(2);
  const f = await startFake({ port: Number(p ?? 0), models: ids.length ? ids : undefined });
  console.log(`fake upstream at ${f.url}`);
}

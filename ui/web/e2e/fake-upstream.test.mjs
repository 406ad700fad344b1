// The fake provider keeps the recorded framing (node --test, no browser).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { answerPieces, readFixture, startFake } from './fake-upstream.mjs';

const CHUNKS = 5;
let fake;
before(async () => (fake = await startFake({ models: ['m-1', 'm-2'], chunks: CHUNKS, intervalMs: 1 })));
after(() => fake.close());

const post = (path, body) =>
  fetch(fake.url.replace(/\/v1$/, '') + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
const keys = (o) => Object.keys(o).join(',');

test('OpenAI SSE: the recorded events, headers and terminator, with a counted answer', async () => {
  const rec = readFixture('10-v1-chat-stream.http');
  const recFirst = JSON.parse(rec.body.split('\n\n')[0].slice('data: '.length));
  const res = await post('/v1/chat/completions', { model: 'm-1', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), rec.headers['Content-Type']);
  const text = await res.text();
  assert.ok(text.endsWith('\n\ndata: [DONE]\n\n'), 'ends like the recording');
  const events = text.split('\n\n').filter(Boolean);
  assert.ok(events.every((e) => e.startsWith('data: ')), 'every event is one data: line');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice('data: '.length)));
  for (const c of chunks) {
    assert.equal(keys(c), keys(recFirst), 'same members in the same order');
    assert.equal(c.model, 'm-1');
  }
  const n = fake.requests;
  const content = chunks.map((c) => c.choices[0].delta.content ?? '').join('');
  assert.equal(content, answerPieces(n, CHUNKS).join(''));
  assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');

  // The next answer has the next number: a regeneration differs.
  const again = await (await post('/v1/chat/completions', { model: 'm-1', stream: true })).text();
  assert.match(again, new RegExp(`"content":"Answer ${n + 1}"`));
});

test('hold() stops the next stream mid-way until release()', async () => {
  const gate = fake.hold(2);
  const res = await post('/v1/chat/completions', { model: 'm-2', stream: true });
  const reader = res.body.getReader();
  let got = '';
  while ((got.match(/^data: \{/gm) ?? []).length < 2) got += new TextDecoder().decode((await reader.read()).value);
  const pending = reader.read();
  const raced = await Promise.race([pending.then(() => 'more'), new Promise((r) => setTimeout(() => r('held'), 100))]);
  assert.equal(raced, 'held', 'nothing after the second piece while held');
  gate.release();
  await pending;
  while (!(await reader.read()).done);
});

test('background tasks get the JSON their prompt asks for, framed as recorded', async () => {
  const rec = readFixture('11-v1-chat-nostream.http');
  const res = await post('/v1/chat/completions', {
    model: 'm-1',
    stream: false,
    messages: [{ role: 'user', content: 'Reply with { "title": "…" }' }],
  });
  assert.equal(res.headers.get('content-length'), String((await res.clone().arrayBuffer()).byteLength));
  const o = await res.json();
  assert.equal(keys(o), keys(JSON.parse(rec.body)));
  assert.deepEqual(JSON.parse(o.choices[0].message.content), { title: 'Zephyr greeting' });
});

test('models and errors as recorded', async () => {
  const list = await (await fetch(`${fake.url}/models`)).json();
  assert.deepEqual(list.data.map((m) => m.id), ['m-1', 'm-2']);
  const rec = JSON.parse(readFixture('14-v1-models.http').body);
  assert.equal(keys(list.data[0]), keys(rec.data[0]));
  const miss = await post('/v1/chat/completions', { model: 'nope', stream: true });
  assert.equal(miss.status, 404);
  assert.deepEqual(await miss.json(), JSON.parse(readFixture('22-v1-error-unknown-model.http').body));
});

test('Ollama NDJSON: one object per line, the last one done', async () => {
  const res = await post('/api/chat', { model: 'm-1', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(res.headers.get('content-type'), readFixture('04-chat-stream.http').headers['Content-Type']);
  const text = await res.text();
  assert.ok(text.endsWith('}\n'));
  const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, CHUNKS + 1);
  assert.equal(lines.at(-1).done, true);
  assert.equal(lines.slice(0, -1).map((l) => l.message.content).join(''), answerPieces(fake.requests, CHUNKS).join(''));
});

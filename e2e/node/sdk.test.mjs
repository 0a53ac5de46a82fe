// The official OpenAI Node SDK against a gateway serving the demo
// configuration: OPENAI_BASE_URL names it (ending in /v1). Run by
// e2e/nodesdk_test.go, once against the example server and once through
// the example relay in front of it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const baseURL = process.env.OPENAI_BASE_URL;
assert.ok(baseURL, 'OPENAI_BASE_URL is not set');

// No retries: a retried request would hide the error under test.
const client = (apiKey = 'sk-demo', url = baseURL) => new OpenAI({ apiKey, baseURL: url, maxRetries: 0, timeout: 60_000 });
// OPENAI_BASE_URL_OTHER, when set, names another replica of the same
// gateway: the conversation test continues there what it started on the
// first.
const other = () => client('sk-demo', process.env.OPENAI_BASE_URL_OTHER ?? baseURL);

test('lists the models', async () => {
  const ids = [];
  for await (const m of client().models.list()) ids.push(m.id);
  for (const id of ['demo-chat', 'demo-reasoner', 'demo-video']) assert.ok(ids.includes(id), `${id} in ${ids}`);
});

test('chat completion', async () => {
  const c = await client().chat.completions.create({
    model: 'demo-chat',
    messages: [{ role: 'user', content: 'hello' }],
  });
  assert.equal(c.object, 'chat.completion');
  assert.match(c.id, /^chatcmpl-/);
  assert.equal(c.choices.length, 1);
  assert.equal(c.choices[0].message.role, 'assistant');
  assert.ok(c.choices[0].message.content.length > 0);
  assert.equal(c.choices[0].finish_reason, 'stop');
  assert.equal(c.usage.total_tokens, c.usage.prompt_tokens + c.usage.completion_tokens);
});

test('chat completion stream with usage', async () => {
  const stream = await client().chat.completions.create({
    model: 'demo-chat',
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: 12,
    messages: [{ role: 'user', content: 'hello' }],
  });
  let text = '';
  let finish = null;
  let usage = null;
  const ids = new Set();
  for await (const chunk of stream) {
    ids.add(chunk.id);
    for (const ch of chunk.choices) {
      text += ch.delta.content ?? '';
      finish = ch.finish_reason ?? finish;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(ids.size, 1, 'one id across the chunks');
  assert.ok(text.length > 0);
  assert.equal(finish, 'length');
  assert.equal(usage.completion_tokens, 12);
});

test('legacy completion', async () => {
  const c = await client().completions.create({ model: 'demo-instruct', prompt: 'Once upon a time', max_tokens: 8 });
  assert.equal(c.object, 'text_completion');
  assert.ok(c.choices[0].text.length > 0);
  assert.equal(c.usage.completion_tokens, 8);
});

test('responses: a conversation continued with previous_response_id', async () => {
  const first = await client().responses.create({ model: 'demo-chat', input: 'My name is Ada.' });
  assert.equal(first.status, 'completed');
  assert.ok(first.output_text.length > 0);
  const second = await client().responses.create({
    model: 'demo-chat',
    input: 'What is my name?',
    previous_response_id: first.id,
  });
  assert.equal(second.previous_response_id, first.id);
  assert.equal((await client().responses.retrieve(second.id)).id, second.id);
});

test('conversation with items, continued by responses', async () => {
  const conv = await client().conversations.create({
    items: [{ type: 'message', role: 'user', content: 'My name is Ada.' }],
    metadata: { topic: 'names' },
  });
  assert.match(conv.id, /^conv_/);
  assert.equal(conv.object, 'conversation');
  assert.deepEqual((await other().conversations.retrieve(conv.id)).metadata, { topic: 'names' });

  const first = await other().responses.create({ model: 'demo-chat', input: 'What is my name?', conversation: conv.id });
  assert.equal(first.conversation.id, conv.id);
  assert.match(first.output_text, /^Earlier you said: "My name is Ada\."/);
  const stream = client().responses.stream({ model: 'demo-chat', input: 'Thanks.', conversation: { id: conv.id } });
  for await (const _ of stream); // eslint-disable-line no-unused-vars
  const second = await stream.finalResponse();
  assert.equal(second.conversation.id, conv.id);

  const added = await client().conversations.items.create(conv.id, {
    items: [{ type: 'message', role: 'user', content: 'I live in Paris.' }],
  });
  assert.equal(added.data.length, 1);
  const texts = [];
  for await (const it of other().conversations.items.list(conv.id, { order: 'asc', limit: 2 })) {
    texts.push(`${it.role}: ${it.content[0].text}`);
  }
  assert.deepEqual(texts, [
    'user: My name is Ada.',
    'user: What is my name?',
    `assistant: ${first.output_text}`,
    'user: Thanks.',
    `assistant: ${second.output_text}`,
    'user: I live in Paris.',
  ]);
  const item = await other().conversations.items.retrieve(added.data[0].id, { conversation_id: conv.id });
  assert.equal(item.content[0].text, 'I live in Paris.');
  assert.equal((await client().conversations.items.delete(added.data[0].id, { conversation_id: conv.id })).id, conv.id);
  const page = await client().conversations.items.list(conv.id);
  assert.equal(page.data[0].id, second.output[0].id, 'newest first');

  assert.deepEqual((await other().conversations.update(conv.id, { metadata: { topic: 'done' } })).metadata, { topic: 'done' });
  assert.equal((await client().conversations.delete(conv.id)).deleted, true);
  await assert.rejects(other().conversations.retrieve(conv.id), OpenAI.NotFoundError);
  await assert.rejects(
    client().responses.create({ model: 'demo-chat', input: 'hi', conversation: conv.id }),
    OpenAI.NotFoundError,
  );
});

test('responses stream ends cleanly', async () => {
  const stream = client().responses.stream({ model: 'demo-reasoner', input: 'hello' });
  const types = [];
  let text = '';
  for await (const ev of stream) {
    types.push(ev.type);
    if (ev.type === 'response.output_text.delta') text += ev.delta;
  }
  const final = await stream.finalResponse();
  assert.equal(types[0], 'response.created');
  assert.equal(types.at(-1), 'response.completed');
  assert.equal(final.status, 'completed');
  assert.equal(final.output_text, text);
  assert.ok(final.usage.total_tokens > 0);
});

test('background: create, poll, cancel; a stream resumed after its event 10', async () => {
  const created = await client().responses.create({
    model: 'demo-chat', input: 'hello', background: true, max_output_tokens: 16,
  });
  assert.equal(created.status, 'queued');
  assert.equal(created.background, true);
  let got = created;
  while (got.status === 'queued' || got.status === 'in_progress') {
    await new Promise((resolve) => setTimeout(resolve, 50)); // a client's poll
    got = await other().responses.retrieve(created.id);
  }
  assert.equal(got.status, 'incomplete');
  assert.match(got.output_text, /^You said: "hello"\./);
  assert.equal((await other().responses.cancel(got.id)).status, 'incomplete', 'an ended response is answered as it is');
  const foreground = await client().responses.create({ model: 'demo-chat', input: 'hi' });
  await assert.rejects(client().responses.cancel(foreground.id), OpenAI.BadRequestError);

  const doomed = await client().responses.create({ model: 'demo-chat', input: 'Tell me a story.', background: true });
  const cancelled = await other().responses.cancel(doomed.id);
  assert.equal(cancelled.status, 'cancelled');
  assert.equal((await client().responses.retrieve(doomed.id)).status, 'cancelled');

  const stream = await client().responses.create({
    model: 'demo-chat', input: 'hello', background: true, stream: true, max_output_tokens: 16,
  });
  const seqs = [];
  let id;
  let text = '';
  for await (const ev of stream) {
    seqs.push(ev.sequence_number);
    if (ev.type === 'response.created') id = ev.response.id;
    if (ev.type === 'response.output_text.delta') text += ev.delta;
    if (ev.sequence_number === 10) break; // the client drops
  }
  const resumed = await other().responses.retrieve(id, { stream: true, starting_after: 10 });
  let final;
  for await (const ev of resumed) {
    seqs.push(ev.sequence_number);
    if (ev.type === 'response.output_text.delta') text += ev.delta;
    if (ev.type === 'response.incomplete') final = ev.response;
  }
  assert.deepEqual(seqs, seqs.map((_, i) => i), 'every event once, in order');
  assert.ok(final, 'the resumed stream ends with response.incomplete');
  assert.equal(final.output[0].content[0].text, text);
});

test('video: create (multipart), poll, download the video and its thumbnail', async () => {
  const c = client();
  let v = await c.videos.create({ model: 'demo-video', prompt: 'a red kite', seconds: '4', size: '1280x720' });
  assert.match(v.id, /^task_/);
  const deadline = Date.now() + 90_000;
  while (v.status === 'queued' || v.status === 'in_progress') {
    assert.ok(Date.now() < deadline, `still ${v.status} at ${v.progress}%`);
    await new Promise((r) => setTimeout(r, 200));
    v = await c.videos.retrieve(v.id);
  }
  assert.equal(v.status, 'completed', JSON.stringify(v.error));
  const video = Buffer.from(await (await c.videos.downloadContent(v.id)).arrayBuffer());
  assert.equal(video.subarray(4, 8).toString('latin1'), 'ftyp', 'an MP4');
  const thumb = Buffer.from(await (await c.videos.downloadContent(v.id, { variant: 'thumbnail' })).arrayBuffer());
  assert.ok(thumb.length > 0);
});

test('video: invalid requests are refused at once with 400', async () => {
  const cases = [
    { model: 'demo-video', prompt: 'kite', seconds: '5', size: '1280x720' },
    { model: 'demo-video', prompt: 'kite', seconds: '4', size: '1x1' },
    { model: 'demo-nope', prompt: 'kite', seconds: '4', size: '1280x720' },
  ];
  for (const body of cases) {
    await assert.rejects(client().videos.create(body), (err) => {
      assert.ok(err instanceof OpenAI.BadRequestError, `${JSON.stringify(body)}: ${err}`);
      assert.ok(err.message.length > 0);
      return true;
    });
  }
});

test('errors of the spec', async () => {
  await assert.rejects(client('sk-nope').models.list(), OpenAI.AuthenticationError);
  await assert.rejects(
    client('sk-demo-empty').chat.completions.create({ model: 'demo-chat', messages: [{ role: 'user', content: 'hi' }] }),
    OpenAI.PermissionDeniedError,
  );
  await assert.rejects(
    client().chat.completions.create({ model: 'demo-nope', messages: [{ role: 'user', content: 'hi' }] }),
    OpenAI.NotFoundError,
  );
});

// @anthropic-ai/sdk: messages.stream(...).finalMessage(); tool_use blocks are the calls (input as JSON).
import Anthropic from '@anthropic-ai/sdk';
import { anthropicTools, argumentsText, runAll } from './common.mjs';

await runAll(async (job) => {
  const client = new Anthropic({ baseURL: job.root, apiKey: 'callscope-test', maxRetries: 0, timeout: 10000 });
  const stream = client.messages.stream({ model: job.model, max_tokens: 256, messages: job.messages,
                                          tools: anthropicTools(job.tools) });
  const message = await stream.finalMessage();
  return { calls: (message.content ?? []).filter((b) => b?.type === 'tool_use')
    .map((b) => ({ id: b.id ?? null, name: b.name ?? null, arguments: argumentsText(b.input) })) };
});

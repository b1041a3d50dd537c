// The Vercel AI SDK (ai + @ai-sdk/openai-compatible, what opencode uses): streamText with the request's tools
// (no execute), reading fullStream. Its tool-call parts are the calls (invalid ones flagged); an error part is
// what the application is told went wrong, so it counts as raising.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { jsonSchema, streamText, tool } from 'ai';
import { argumentsText, described, runAll } from './common.mjs';

await runAll(async (job) => {
  const provider = createOpenAICompatible({ name: 'quirk', baseURL: `${job.root}/v1`, apiKey: 'callscope-test' });
  const tools = Object.fromEntries(job.tools.map((t) => [t.function.name, tool({
    description: t.function.description, inputSchema: jsonSchema(t.function.parameters) })]));
  const result = streamText({ model: provider(job.model), messages: job.messages, tools, maxRetries: 0 });
  const calls = [];
  const errors = [];
  for await (const part of result.fullStream) {
    if (part.type === 'tool-call') {
      calls.push({ id: part.toolCallId ?? null, name: part.toolName ?? null, arguments: argumentsText(part.input),
                   ...(part.invalid ? { invalid: true } : {}) });
    } else if (part.type === 'error') {
      errors.push(described(part.error));
    }
  }
  return errors.length ? { raises: errors[0] } : { calls };
});

// @langchain/openai: ChatOpenAI.bindTools(...).stream(...), the chunks summed with concat() as LangChain apps do;
// tool_calls are the calls, invalid_tool_calls are reported as invalid calls.
import { ChatOpenAI } from '@langchain/openai';
import { argumentsText, runAll } from './common.mjs';

await runAll(async (job) => {
  const model = new ChatOpenAI({ model: job.model, apiKey: 'callscope-test', maxRetries: 0, timeout: 10000,
                                 configuration: { baseURL: `${job.root}/v1` } }).bindTools(job.tools);
  let full;
  for await (const chunk of await model.stream(job.messages)) full = full === undefined ? chunk : full.concat(chunk);
  const calls = (full?.tool_calls ?? []).map((c) => ({ id: c.id ?? null, name: c.name ?? null,
                                                       arguments: argumentsText(c.args) }));
  const invalid = (full?.invalid_tool_calls ?? []).map((c) => ({ id: c.id ?? null, name: c.name ?? null,
                                                                 arguments: argumentsText(c.args), invalid: true }));
  return { calls: [...calls, ...invalid] };
});

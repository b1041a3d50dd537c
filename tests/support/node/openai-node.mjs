// openai-node: chat.completions.stream(...).finalChatCompletion() and responses.stream(...).finalResponse(),
// as an application uses the official SDK's stream helpers.
import OpenAI from 'openai';
import { argumentsText, runAll } from './common.mjs';

await runAll(async (job) => {
  const client = new OpenAI({ baseURL: `${job.root}/v1`, apiKey: 'callscope-test', maxRetries: 0, timeout: 10000 });
  if (job.protocol === 'responses') {
    const tools = job.tools.map((t) => ({ type: 'function', name: t.function.name, parameters: t.function.parameters,
                                          strict: false }));
    const stream = client.responses.stream({ model: job.model, input: job.messages[0].content, tools });
    const response = await stream.finalResponse();
    return { calls: (response.output ?? []).filter((item) => item?.type === 'function_call')
      .map((item) => ({ id: item.call_id ?? null, name: item.name ?? null, arguments: argumentsText(item.arguments) })) };
  }
  const stream = client.chat.completions.stream({ model: job.model, messages: job.messages, tools: job.tools });
  const completion = await stream.finalChatCompletion();
  const message = completion.choices[0]?.message;
  return { calls: (message?.tool_calls ?? []).map((call) => ({
    id: call?.id ?? null, name: call?.function?.name ?? null, arguments: argumentsText(call?.function?.arguments) })) };
});

// Shared by the drivers: read the jobs (JSON on stdin), run each against its loopback server, print the outcomes.
// A job: {quirk, root, model, protocol, tools, messages}. root is the server's base (no /v1). The outcome of a job is
// {calls: [{id, name, arguments, invalid?}]} or {raises: "Name: message"}; one JSON array on stdout, in job order.

export async function readJobs() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

export function described(error) {
  const name = error?.constructor?.name ?? typeof error;
  const message = String(error?.message ?? error).split('\n')[0].slice(0, 200);
  return `${name}: ${message}`;
}

// Arguments as the client holds them, as text: a string as it is, anything else as JSON.
export function argumentsText(value) {
  if (typeof value === 'string') return value;
  return value === undefined ? null : JSON.stringify(value);
}

export async function runAll(run) {
  const jobs = await readJobs();
  const results = [];
  for (const job of jobs) {
    try {
      results.push(await Promise.race([
        run(job),
        new Promise((_, reject) => setTimeout(() => reject(new Error('driver timeout (15 s)')), 15000)),
      ]));
    } catch (error) {
      results.push({ raises: described(error) });
    }
  }
  process.stdout.write(JSON.stringify(results));
}

export function anthropicTools(tools) {
  return tools.map((t) => ({ name: t.function.name, description: t.function.description ?? '',
                             input_schema: t.function.parameters }));
}

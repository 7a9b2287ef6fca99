// Drives `ghonce mcp` with the official TypeScript MCP SDK, over stdio and
// over Streamable HTTP, and prints one JSON object with what it saw for the
// Go test (cmd/ghonce/mcp_node_test.go) to check. Usage:
//   node client.mjs BINARY LEDGER [HTTP_URL]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [bin, ledger, httpURL] = process.argv.slice(2);
const out = {};

async function session(transport, fn) {
  const client = new Client({ name: "ts-sdk-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

// callTool validates structuredContent against the tool's outputSchema.
const call = (client, name, args) => client.callTool({ name, arguments: args });

out.stdio = await session(
  new StdioClientTransport({
    command: bin,
    args: ["mcp", "--ledger", ledger, "--task", "ISSUE-42"],
    env: { ...process.env },
    stderr: "inherit",
  }),
  async (client) => {
    const { tools } = await client.listTools();
    const repo = { owner: "octo-org", repo: "hello-world" };
    const first = await call(client, "create_issue", { ...repo, title: "Follow-up: flaky test", body: "Seen twice." });
    const again = await call(client, "create_issue", { ...repo, title: "Flaky test (retry)", body: "Reworded." });
    const bad = await call(client, "add_issue_comment", { ...repo, issue_number: 0, body: "x" });
    return {
      tools: tools.map((t) => ({ name: t.name, required: t.inputSchema.required ?? [], annotations: t.annotations ?? {}, hasOutputSchema: !!t.outputSchema })),
      first: { structured: first.structuredContent, text: first.content.map((c) => c.text).join("\n"), isError: !!first.isError },
      again: { structured: again.structuredContent, text: again.content.map((c) => c.text).join("\n"), isError: !!again.isError },
      bad: { text: bad.content.map((c) => c.text).join("\n"), isError: !!bad.isError },
    };
  },
);

if (httpURL) {
  out.http = await session(new StreamableHTTPClientTransport(new URL(httpURL)), async (client) => {
    const { tools } = await client.listTools();
    const res = await call(client, "ghonce_status", {});
    return { tools: tools.length, status: res.structuredContent, isError: !!res.isError };
  });
}

process.stdout.write(JSON.stringify(out) + "\n");

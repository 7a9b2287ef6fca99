// Drives `ghonce mcp` with the official TypeScript MCP SDK, over stdio and
// over Streamable HTTP, and prints one JSON object with what it saw for the
// Go test (cmd/ghonce/mcp_node_test.go) to check. Usage:
//   node client.mjs BINARY LEDGER [HTTP_URL [UPSTREAM]]
// With UPSTREAM (github-mcp-server's path), the stdio server is
// `ghonce mcp --upstream -- UPSTREAM stdio` (task from GHONCE_TASK), the
// issue is filed with issue_write, and over HTTP the client calls get_me.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [bin, ledger, httpURL, upstream] = process.argv.slice(2);
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
    args: upstream ? ["mcp", "--ledger", ledger, "--upstream", "--", upstream, "stdio"] : ["mcp", "--ledger", ledger, "--task", "ISSUE-42"],
    env: { ...process.env },
    stderr: "inherit",
  }),
  async (client) => {
    const { tools } = await client.listTools();
    const repo = { owner: "octo-org", repo: "hello-world" };
    const [tool, extra] = upstream ? ["issue_write", { method: "create" }] : ["create_issue", {}];
    const first = await call(client, tool, { ...repo, ...extra, title: "Follow-up: flaky test", body: "Seen twice." });
    const again = await call(client, tool, { ...repo, ...extra, title: "Follow-up: flaky test", body: "Reworded." });
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
    const res = upstream ? await call(client, "get_me", {}) : await call(client, "ghonce_status", {});
    return { tools: tools.length, status: res.structuredContent, text: res.content.map((c) => c.text).join("\n"), isError: !!res.isError };
  });
}

process.stdout.write(JSON.stringify(out) + "\n");

// An MCP server written with the official TypeScript SDK, for tests/typescript_sdk.rs: our
// client against another SDK's server. `node server.mjs` serves stdio; `node server.mjs --http`
// serves Streamable HTTP (stateful sessions) on 127.0.0.1 and prints its URL.
// Needs NODE_PATH (or a node_modules) holding @modelcontextprotocol/sdk and zod.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { randomUUID } from "node:crypto";
import http from "node:http";
import { z } from "zod";

function build() {
  const server = new McpServer({ name: "ts-sdk-server", version: "1.0.0" });
  server.tool("add", "Adds two numbers.", { a: z.number(), b: z.number() }, async ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
  }));
  server.tool("slow", "Reports progress, then answers.", {}, async (_args, extra) => {
    const token = extra._meta?.progressToken;
    for (const step of [1, 2, 3]) {
      if (token !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: step, total: 3 },
        });
      }
    }
    return { content: [{ type: "text", text: "done" }] };
  });
  server.resource("greeting", "greeting://hello", async (uri) => ({
    contents: [{ uri: uri.href, text: "Hello from TypeScript" }],
  }));
  server.prompt("review", { code: z.string() }, ({ code }) => ({
    messages: [{ role: "user", content: { type: "text", text: `Review: ${code}` } }],
  }));
  return server;
}

if (process.argv.includes("--http")) {
  const transports = {};
  const httpServer = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const sid = req.headers["mcp-session-id"];
    let transport = sid ? transports[sid] : undefined;
    if (!transport) {
      if (sid || !body || body.method !== "initialize") {
        res.writeHead(sid ? 404 : 400).end();
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => { transports[id] = transport; },
      });
      await build().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  httpServer.listen(0, "127.0.0.1", () => {
    console.log(`http://127.0.0.1:${httpServer.address().port}/mcp`);
  });
} else {
  await build().connect(new StdioServerTransport());
}

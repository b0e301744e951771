import { fieldIssues } from '@agentinfra/core';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { withProtoArgument } from './proto-argument.js';
import { RpcError } from './rpc-error.js';

/** A request schema of the SDK (`CallToolRequestSchema`, …): an object with a `method` literal and `params`. */
type RequestSchema = z.ZodObject<{ method: z.ZodLiteral<string>; params: z.ZodType }>;

/**
 * `schema` for `setRequestHandler`, answering a request whose params fail it
 * with JSON-RPC -32602 Invalid params and a one-line message
 * (`Invalid params of tools/call: params.arguments: Invalid input: expected
 * record, received string`), as JSON-RPC 2.0 and the MCP specification
 * (tools: "malformed requests" are protocol errors) have it. The SDK 1.x
 * parses params before the handler runs and answers a failure with -32603
 * Internal error and the multi-line zod issue dump
 * (modelcontextprotocol/typescript-sdk#2284); here the params are checked
 * inside that parse, which passes an error with a JSON-RPC code on unchanged
 * (an {@link RpcError}, whose message goes on the wire as written). The
 * arguments of `tools/call` keep a `__proto__` key ({@link withProtoArgument}).
 */
export function answeringInvalidParams<S extends RequestSchema>(schema: S): S {
  const params = schema.shape.params;
  const method = schema.shape.method.value;
  return schema.extend({
    params: z
      .unknown()
      .optional()
      .transform((value) => {
        const parsed = params.safeParse(value);
        if (parsed.success) return method === 'tools/call' ? withProtoArgument(value, parsed.data) : parsed.data;
        const problems = fieldIssues(parsed.error, ['params']).map((issue) => `${issue.path}: ${issue.message}`);
        throw new RpcError(ErrorCode.InvalidParams, `Invalid params of ${method}: ${problems.join('; ')}`);
      }),
  }) as unknown as S;
}

/**
 * The request schemas both MCP servers (`/mcp` and the stdio proxy) answer,
 * each wrapped by {@link answeringInvalidParams}; built once, as servers are
 * built per request.
 */
export const REQUEST_SCHEMAS = {
  listTools: answeringInvalidParams(ListToolsRequestSchema),
  callTool: answeringInvalidParams(CallToolRequestSchema),
  listResourceTemplates: answeringInvalidParams(ListResourceTemplatesRequestSchema),
  listResources: answeringInvalidParams(ListResourcesRequestSchema),
  readResource: answeringInvalidParams(ReadResourceRequestSchema),
};

import type { Command } from "commander";
import { createMessageInput, listMessageAttemptsQuery, listMessagesQuery, resendInput } from "../../src/contracts/messages";
import { act, noun, parseIntArg, payloadArg, verb } from "../command";
import { parseInput, path, textQuery, type QueryValue } from "../context";
import { ATTEMPT_COLUMNS } from "../output/attempts";
import { cursorPageFlags, nextPage } from "../paging";

const ID = "0123456789abcdef0123456789abcdef";

const domain = () => import("../../src/outbound/messages");
const fanout = () => import("../../src/outbound/fanout");
const resend = () => import("../../src/outbound/resend");
const COLUMNS = ["id", "event_type", "status", "created_at", "updated_at"];

const messages = (app: string) => path`/applications/${app}/messages`;
const message = (app: string, id: string, rest = "") => path`/applications/${app}/messages/${id}` + rest;

/** `hookrelay messages send|list|get|attempts|resend APP …`: an application's messages, the application by its id or uid. */
export function registerMessages(program: Command) {
  const cmd = noun(program, "messages", "Messages sent to an application's endpoints: send one, list them, see each one's delivery attempts, resend", [
    "hookrelay messages send acme --type order.created --data @order.json",
    "hookrelay messages list acme --event-type order.created",
    `hookrelay messages attempts acme ${ID}`,
  ]);
  /** A verb with its flags and its action. */
  const step = (nameAndArgs: string, description: string, examples: string[], setup: (c: Command) => unknown, run: Parameters<typeof act>[1]) => {
    const c = verb(cmd, nameAndArgs, description, examples);
    setup(c);
    act(c, run);
  };

  step(
    "send <app>",
    "Send a message to every endpoint of the application that receives its event type; an event type with a JSON Schema checks the payload (422)",
    [
      "hookrelay messages send acme --type order.created --data @order.json",
      `hookrelay messages send acme --type order.created --data '{"id": "ord_1", "total": 4200}' --id order-ord_1-created`,
      "jq -c . order.json | hookrelay messages send acme --type order.created --data - --json",
    ],
    (cmd) =>
      cmd
        .requiredOption("--type <event-type>", "the message's event type, e.g. order.created")
        .requiredOption("--data <json>", "the payload: inline JSON, @file.json, or - for stdin", payloadArg)
        .option("--id <key>", "idempotency key: sending the same key again answers the first message and sends nothing"),
    async (ctx, opts, [app]) => {
      const body = { event_type: opts.type as string, payload: opts.data as unknown, ...(opts.id === undefined ? {} : { id: opts.id as string }) };
      const res = await ctx.run({
        method: "POST",
        path: messages(app!),
        body,
        expect: "message",
        local: async (deps, scope) => {
          const { message: sent } = await (await fanout()).createMessage(deps, scope, app!, parseInput(createMessageInput, body));
          return { message: sent };
        },
      });
      ctx.out.result(res, { text: (m, c) => `${c.green("✓")} Message ${c.cyan(m.message.id)} (${m.message.event_type}) to ${app}: ${m.message.status}` });
    },
  );

  step(
    "list <app>",
    "List the application's messages, newest first, in pages",
    ["hookrelay messages list acme", "hookrelay messages list acme --event-type order.created --limit 100", "hookrelay messages list acme --json | jq -r '.messages[].id'"],
    (cmd) =>
      cursorPageFlags(cmd.option("--event-type <type>", "only messages of this event type")),
    async (ctx, opts, [app]) => {
      const query: Record<string, QueryValue> = { event_type: opts.eventType, cursor: opts.cursor, limit: opts.limit };
      const res = await ctx.run({
        method: "GET",
        path: messages(app!),
        query,
        expect: "messages",
        local: async (deps, scope) => (await domain()).listMessages(deps, scope, app!, parseInput(listMessagesQuery, textQuery(query), "query")),
      });
      ctx.out.result(res, { list: "messages", columns: COLUMNS, empty: "No messages." });
      nextPage(ctx, res, "messages");
    },
  );

  step(
    "get <app> <message>",
    "Show a message with its payload (by id, or by the idempotency key it was sent with)",
    [`hookrelay messages get acme ${ID}`, "hookrelay messages get acme order-ord_1-created --json | jq -r '.message.payload | fromjson'"],
    () => {},
    async (ctx, _opts, [app, id]) => {
      const res = await ctx.run({ method: "GET", path: message(app!, id!), expect: "message", local: async (deps, scope) => (await domain()).getMessage(deps, scope, app!, id!) });
      ctx.out.result(res, { item: "message" });
    },
  );

  step(
    "attempts <app> <message>",
    "The message's delivery attempts to every endpoint (or one), with the responses, newest first",
    [`hookrelay messages attempts acme ${ID}`, `hookrelay messages attempts acme ${ID} --endpoint ${ID} --json`],
    (cmd) => cmd.option("--endpoint <id>", "only the attempts to this endpoint").option("--limit <n>", "at most this many, 1 to 1000 (default 100)", parseIntArg("--limit", 1)),
    async (ctx, opts, [app, id]) => {
      const query: Record<string, QueryValue> = { endpoint_id: opts.endpoint, limit: opts.limit };
      const res = await ctx.run({
        method: "GET",
        path: message(app!, id!, "/attempts"),
        query,
        expect: "attempts",
        local: async (deps, scope) => (await domain()).listMessageAttempts(deps, scope, app!, id!, parseInput(listMessageAttemptsQuery, textQuery(query), "query")),
      });
      ctx.out.result(res, { list: "attempts", columns: ATTEMPT_COLUMNS, empty: "No attempts." });
    },
  );

  step(
    "resend <app> <message>",
    "Send the message to one endpoint again (a new delivery with a fresh retry budget)",
    [`hookrelay messages resend acme ${ID} --endpoint ${ID}`],
    (cmd) => cmd.requiredOption("--endpoint <id>", "the endpoint to send it to"),
    async (ctx, opts, [app, id]) => {
      const body = { endpoint_id: opts.endpoint as string };
      const res = await ctx.run({
        method: "POST",
        path: message(app!, id!, "/resend"),
        body,
        expect: "attempt",
        local: async (deps, scope) => (await resend()).resendMessage(deps, scope, app!, id!, parseInput(resendInput, body)),
      });
      ctx.out.result(res, { text: (a, c) => `${c.green("✓")} Resending message ${c.cyan(id!)} to endpoint ${c.cyan(opts.endpoint as string)}: attempt ${a.attempt.id} ${a.attempt.status}` });
    },
  );
  return cmd;
}

/**
 * A sandbox worker (sandbox.ts): runs one transform or one set of regex
 * checks at a time and answers with the outcome. scripts/build.ts bundles it
 * into the compiled binary as a second entrypoint.
 */
import type { SandboxReply, SandboxRequest } from "./sandbox";
import { evaluateInSandbox, type TransformInput } from "./transform";
import { regexChecksPass } from "./filter";
import { errorMessage } from "../contracts/errors";

declare const self: Worker;

self.onmessage = async (e: MessageEvent<SandboxRequest>) => {
  const request = e.data;
  let reply: SandboxReply;
  try {
    if (request.op === "transform") reply = await evaluateInSandbox(request.expression, request.input as TransformInput, request.timeoutMs);
    else reply = { ok: true, value: regexChecksPass(request.checks) };
  } catch (err) {
    reply = { ok: false, failure: { kind: "error", message: errorMessage(err) } };
  }
  self.postMessage({ reply });
};

self.postMessage({ ready: true });

import { createPublicKey, verify } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/delivery";
import { useServer } from "../helpers/fixture";
import { call, type TestServer } from "../helpers/server";
import { outboundSink } from "../outbound/helpers";
import { cli, ensureBinary, modeEnvs, ok, refused, same } from "./helpers";

/**
 * `hookrelay endpoints public-key` and `destinations public-key` (docs/cli.md)
 * in both modes, with a read key in remote mode: the public key printed
 * verifies the `v1a` signature a receiver gets. The keys are made by the
 * compiled binary in local mode, so Ed25519 key generation is shown to work
 * there too (node:crypto under `bun build --compile`).
 */
let server: TestServer, key: string;
let remoteEnv: Record<string, string>;
let localEnv: Record<string, string>;
let readEnv: Record<string, string>;
const sink = outboundSink();

useServer({ readKey: true }, (s) => {
  ({ server, key } = s);
  ({ remoteEnv, localEnv } = modeEnvs(s.server, s.key));
  readEnv = { ...remoteEnv, HOOKRELAY_API_KEY: s.readKey };
});
beforeAll(() => ensureBinary());
afterAll(() => sink.close());

const run = (env: Record<string, string>, args: string[], binary?: boolean) => cli([...args, "--json"], { env, binary });

function verifiesV1a(whpk: string, req: { headers: Record<string, string>; body: string }): boolean {
  const publicKey = createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), Buffer.from(whpk.slice(5), "base64")]), format: "der", type: "spki" });
  const [entry] = req.headers["webhook-signature"]!.split(" ");
  expect(entry).toMatch(/^v1a,/);
  return verify(null, Buffer.from(`${req.headers["webhook-id"]}.${req.headers["webhook-timestamp"]}.${req.body}`), publicKey, Buffer.from(entry!.slice(4), "base64"));
}

describe("hookrelay endpoints public-key", () => {
  it("prints the public key of an ed25519 endpoint the compiled binary made, the same in both modes and for a read key", async () => {
    const app = ok(await run(remoteEnv, ["apps", "create", "--name", "Keys", "--uid", "keys"])).application;
    const endpoint = ok(await run(localEnv, ["endpoints", "create", "--app", "keys", "--url", `${sink.url}/cli-ed`, "--signing-algorithm", "ed25519"], true)).endpoint;
    expect(endpoint.signing_algorithm).toBe("ed25519");
    const args = ["endpoints", "public-key", endpoint.id, "--app", "keys"];
    const shown = same(await Promise.all([run(remoteEnv, args), run(localEnv, args)]));
    expect(shown).toEqual({ public_key: expect.stringMatching(/^whpk_[A-Za-z0-9+/]{43}=$/), algorithm: "ed25519" });
    expect(ok(await run(readEnv, args))).toEqual(shown);
    // Without --json, the key alone: what `export WEBHOOK_PUBLIC_KEY=$(…)` wants.
    const text = await cli(args, { env: readEnv });
    expect(text.stdout.trim()).toBe(shown.public_key);
    // The read key may not print the private key: refused, exit 4 (docs/cli.md, exit codes).
    const secret = await run(readEnv, ["endpoints", "secret", endpoint.id, "--app", "keys"]);
    expect(secret.code).toBe(4);
    expect(secret.errorJson().error.code).toBe("forbidden");

    const sent = await call(server, "POST", `/v1/applications/${app.id}/messages`, { key, body: { event_type: "cli.ed", payload: { n: 1 } } });
    expect(sent.status).toBe(202);
    const [req] = await waitFor(async () => (sink.at("/cli-ed").length ? sink.at("/cli-ed") : null), { what: "the message" });
    expect(verifiesV1a(shown.public_key, req!)).toBe(true);
  });

  it("refuses an hmac-sha256 endpoint (409, exit 1): it has no public key", async () => {
    const endpoint = ok(await run(remoteEnv, ["endpoints", "create", "--app", "keys", "--url", `${sink.url}/cli-hmac`])).endpoint;
    refused(await Promise.all([run(remoteEnv, ["endpoints", "public-key", endpoint.id, "--app", "keys"]), run(localEnv, ["endpoints", "public-key", endpoint.id, "--app", "keys"])]), "conflict");
  });
});

describe("hookrelay destinations public-key", () => {
  it("prints an ed25519 destination's public key, the same in both modes", async () => {
    const destination = ok(await run(localEnv, ["destinations", "create", "--name", "signed", "--url", `${sink.url}/cli-dst`, "--signing-algorithm", "ed25519"], true)).destination;
    expect(destination.signing_algorithm).toBe("ed25519");
    const args = ["destinations", "public-key", destination.id];
    const shown = same(await Promise.all([run(remoteEnv, args), run(localEnv, args)]));
    expect(shown.public_key).toMatch(/^whpk_/);
    expect(ok(await run(readEnv, args))).toEqual(shown);
    const api = await call(server, "GET", `/v1/destinations/${destination.id}/public-key`, { key });
    expect(api.body).toEqual(shown);
  });
});

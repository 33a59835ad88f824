import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";
import { call, type TestServer } from "../helpers/server";
import { waitFor } from "../helpers/delivery";

/** A self-signed certificate for localhost / 127.0.0.1 (see fixtures/README.md). */
export const TLS_FIXTURE = {
  key: readFileSync(join(import.meta.dirname, "fixtures/smtp-key.pem")),
  cert: readFileSync(join(import.meta.dirname, "fixtures/smtp-cert.pem")),
};

export interface ReceivedMail {
  from: string | null;
  to: string[];
  /** The message as it came over the wire (headers and MIME parts). */
  raw: string;
  /** Whether the session was encrypted (STARTTLS or implicit TLS). */
  secure: boolean;
  user: string | null;
}

export interface TestSmtp {
  port: number;
  mails: ReceivedMail[];
  close(): Promise<void>;
}

/**
 * A real SMTP server (the smtp-server package): `plain` offers no TLS,
 * `starttls` offers the STARTTLS upgrade, `implicit` speaks TLS from the
 * first byte (smtps). With `auth`, only that user and password get in.
 */
export async function startSmtp(mode: "plain" | "starttls" | "implicit", auth?: { user: string; pass: string }): Promise<TestSmtp> {
  const mails: ReceivedMail[] = [];
  const disabledCommands = [...(mode === "plain" ? ["STARTTLS"] : []), ...(auth ? [] : ["AUTH"])];
  const server = new SMTPServer({
    secure: mode === "implicit",
    ...(mode === "plain" ? {} : TLS_FIXTURE),
    disabledCommands,
    authOptional: !auth,
    allowInsecureAuth: mode === "plain",
    logger: false,
    onAuth(a, _session, cb) {
      if (auth && a.username === auth.user && a.password === auth.pass) return cb(null, { user: a.username });
      cb(new Error("Invalid username or password"));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
          secure: session.secure,
          user: (session.user as string | undefined) ?? null,
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, mails, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A MIME part's text: quoted-printable soft breaks joined and =XX escapes decoded. */
export function mimeText(raw: string): string {
  return Buffer.from(
    raw.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
    "latin1",
  ).toString("utf8");
}

/** The free port of a server that was started and stopped: nothing listens there. */
export function closedPort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

export async function createChannel(server: TestServer, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await call(server, "POST", "/v1/notification-channels", { key, body });
  if (res.status !== 201) throw new Error(`create channel: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

export async function createRule(server: TestServer, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await call(server, "POST", "/v1/alert-rules", { key, body: { name: "Rule", ...body } });
  if (res.status !== 201) throw new Error(`create rule: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.alert_rule.id as string;
}

export async function getRule(server: TestServer, key: string, id: string) {
  const res = await call(server, "GET", `/v1/alert-rules/${id}`, { key });
  if (res.status !== 200) throw new Error(`get rule: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { alert_rule: any; history: any[] };
}

/** Waits until the rule has at least `n` history entries; returns them newest first. */
export function waitForHistory(server: TestServer, key: string, id: string, n = 1, timeoutMs = 10_000) {
  return waitFor(
    async () => {
      const { history } = await getRule(server, key, id);
      return history.length >= n ? history : null;
    },
    { timeoutMs, what: `${n} history entries of rule ${id}` },
  );
}

/** The Subject header, unfolded and with its RFC 2047 encoded words (Q or B) decoded. */
export function mailSubject(raw: string): string {
  const header = /^Subject: (.*(?:\r?\n[ \t].*)*)/m.exec(raw)?.[1] ?? "";
  return header
    .replace(/\?=\s+=\?/g, "?==?")
    .replace(/\r?\n[ \t]/g, " ")
    .replace(/=\?([^?]+)\?([QB])\?([^?]*)\?=/gi, (_, _charset: string, enc: string, text: string) =>
      enc.toUpperCase() === "B"
        ? Buffer.from(text, "base64").toString("utf8")
        : Buffer.from(text.replace(/_/g, " ").replace(/=([0-9A-F]{2})/gi, (_m: string, h: string) => String.fromCharCode(parseInt(h, 16))), "latin1").toString("utf8"),
    );
}

import { isIP } from "node:net";
import { createTransport } from "nodemailer";
import { emailChannelConfig, type EmailChannelConfig } from "../../contracts/notificationChannels";
import { DestinationRefused, DnsFailure, resolveAllowedTarget } from "../ssrf";
import { dataFields, headline, truncate } from "./format";
import { maskUrlPassword } from "./mask";
import { NotifyError, type AlertNotification, type ChannelKind, type SendContext } from "./types";

const esc = (s: string) => s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");

/** Subject, a text part and an HTML part saying the same. */
export function emailMessage(n: AlertNotification) {
  const fields = dataFields(n.data);
  const title = n.type === "alert.test" ? "Test notification" : n.type === "alert.resolved" ? `Resolved: ${n.ruleName}` : `Alert: ${n.ruleName}`;
  const text = [
    title,
    "",
    n.reason,
    "",
    ...(n.type !== "alert.test" ? [`Rule type: ${n.ruleType}`] : []),
    ...fields.map(([k, v]) => `${k}: ${v}`),
    `Triggered at: ${n.triggeredAt}`,
    ...(n.resolvedAt ? [`Resolved at: ${n.resolvedAt}`] : []),
    "",
    `Open in hookrelay: ${n.link}`,
    "",
  ].join("\n");
  const rows = [
    ...(n.type !== "alert.test" ? [["rule type", n.ruleType] as [string, string]] : []),
    ...fields,
    ["triggered at", n.triggeredAt] as [string, string],
    ...(n.resolvedAt ? [["resolved at", n.resolvedAt] as [string, string]] : []),
  ]
    .map(([k, v]) => `<tr><th align="left" style="padding:2px 12px 2px 0;color:#555">${esc(k)}</th><td>${esc(v)}</td></tr>`)
    .join("");
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif;font-size:14px">
<h2 style="margin:0 0 8px">${esc(title)}</h2>
<p>${esc(n.reason)}</p>
<table>${rows}</table>
<p><a href="${esc(n.link)}">Open in hookrelay</a></p>
</body></html>`;
  return { subject: truncate(`[hookrelay] ${headline(n)}`, 200), text, html };
}

/** Who an email comes from when the channel names nobody: hookrelay at the host of the base URL. */
function defaultFrom(baseUrl: string): string {
  let host = "localhost";
  try {
    host = new URL(baseUrl).hostname || host;
  } catch {}
  return `hookrelay <hookrelay@${host}>`;
}

/** The query keys HOOKRELAY_SMTP_URL may carry (the operator's own setting, kept working); a channel's smtp_url may carry none. */
export const SERVER_SMTP_QUERY_KEYS = ["requireTLS", "tls.rejectUnauthorized"] as const;

/**
 * The SMTP connection as explicit options, never the URL itself: the mail
 * library would read any option from a URL's query (`?proxy=…` among them)
 * and connect wherever it says, past the guard. The host is the address the
 * guard checked (so a second DNS answer cannot differ), the name kept for
 * TLS certificate checks.
 */
export function smtpTransportOptions(url: URL, checked: { address: string }, opts: { requireTls?: boolean; tlsVerify?: boolean }, timeoutMs: number) {
  const secure = url.protocol === "smtps:";
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  // SNI names a host, never an address (TLS forbids it): an address is checked against the certificate without it.
  const sni = isIP(hostname) ? {} : { servername: hostname };
  return {
    host: checked.address,
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    requireTLS: opts.requireTls === true,
    ...(url.username ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } } : {}),
    tls: { ...sni, rejectUnauthorized: opts.tlsVerify !== false },
    ...sni,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  };
}

async function sendMail(config: EmailChannelConfig, n: AlertNotification, ctx: SendContext): Promise<void> {
  const raw = config.smtp_url ?? ctx.smtpUrl;
  if (!raw) throw new NotifyError("no SMTP server: set HOOKRELAY_SMTP_URL or the channel's smtp_url");
  const url = new URL(raw);
  let requireTls = config.require_tls;
  let tlsVerify = config.tls_verify;
  if (config.smtp_url) {
    // Stored before queries were refused (docs/alerts.md): not sent with options nobody can check.
    if (url.search) throw new NotifyError("the channel's smtp_url carries a query string: edit it (use require_tls and tls_verify)");
  } else {
    for (const k of url.searchParams.keys()) {
      if (!(SERVER_SMTP_QUERY_KEYS as readonly string[]).includes(k)) throw new NotifyError(`HOOKRELAY_SMTP_URL carries an unknown option "${k}"`);
    }
    requireTls ??= url.searchParams.get("requireTLS") === "true";
    tlsVerify ??= url.searchParams.get("tls.rejectUnauthorized") !== "false";
  }
  // The SMTP host is user input too: the destinations' guard applies, and the address it checked is the one connected to.
  let checked: { address: string };
  try {
    checked = await resolveAllowedTarget(url, ctx.blockPrivate);
  } catch (err) {
    if (err instanceof DestinationRefused || err instanceof DnsFailure) throw new NotifyError(`SMTP server ${err.message}`);
    throw err;
  }
  // smtp:// upgrades with STARTTLS when the server offers it (require_tls insists), smtps:// is TLS from the start.
  const transport = createTransport(smtpTransportOptions(url, checked, { requireTls, tlsVerify }, ctx.timeoutMs));
  const message = emailMessage(n);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      transport.sendMail({ from: config.from ?? defaultFrom(ctx.baseUrl), to: config.to, ...message }),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new NotifyError(`no answer from the SMTP server within ${ctx.timeoutMs} ms`)), ctx.timeoutMs))),
    ]);
  } catch (err) {
    if (err instanceof NotifyError) throw err;
    const e = err as { code?: string; message?: string; response?: string };
    throw new NotifyError(`SMTP: ${truncate([e.code, e.response ?? e.message].filter(Boolean).join(": ") || "send failed", 300)}`);
  } finally {
    clearTimeout(timer);
    transport.close();
  }
}

export const email: ChannelKind<EmailChannelConfig> = {
  type: "email",
  config: emailChannelConfig,
  secretFields: ["smtp_url"],
  masked: (c) => ({
    to: c.to,
    ...(c.from ? { from: c.from } : {}),
    ...(c.smtp_url ? { smtp_url: maskUrlPassword(c.smtp_url) } : {}),
    ...(c.require_tls !== undefined ? { require_tls: c.require_tls } : {}),
    ...(c.tls_verify !== undefined ? { tls_verify: c.tls_verify } : {}),
  }),
  send: sendMail,
};

import { createTransport } from "nodemailer";
import { emailChannelConfig, type EmailChannelConfig } from "../../contracts/notificationChannels";
import { DestinationRefused, DnsFailure, resolveAllowedTarget } from "../../delivery/ssrf";
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

async function sendMail(config: EmailChannelConfig, n: AlertNotification, ctx: SendContext): Promise<void> {
  const url = config.smtp_url ?? ctx.smtpUrl;
  if (!url) throw new NotifyError("no SMTP server: set HOOKRELAY_SMTP_URL or the channel's smtp_url");
  // The SMTP host is user input too: the destinations' guard applies (it is connected to by name, not pinned).
  try {
    await resolveAllowedTarget(new URL(url), ctx.blockPrivate);
  } catch (err) {
    if (err instanceof DestinationRefused || err instanceof DnsFailure) throw new NotifyError(`SMTP server ${err.message}`);
    throw err;
  }
  // smtp:// upgrades with STARTTLS when the server offers it (?requireTLS=true insists), smtps:// is TLS from the start.
  const transport = createTransport({
    url,
    connectionTimeout: ctx.timeoutMs,
    greetingTimeout: ctx.timeoutMs,
    socketTimeout: ctx.timeoutMs,
  });
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
  masked: (c) => ({ to: c.to, ...(c.from ? { from: c.from } : {}), ...(c.smtp_url ? { smtp_url: maskUrlPassword(c.smtp_url) } : {}) }),
  send: sendMail,
};

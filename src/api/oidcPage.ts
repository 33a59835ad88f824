import type { Context } from "hono";

/**
 * What a browser sees when single sign-on cannot finish: a short page that
 * says why in words and links back to the login page, never a stack or a
 * JSON error (the browser arrived by a redirect, not a script). The
 * details go to the log.
 */
export function signInFailedPage(c: Context, status: 400 | 403 | 404 | 502 | 503, title: string, message: string) {
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escape(title)} · hookrelay</title></head>
<body>
<main>
<h1>${escape(title)}</h1>
<p>${escape(message)}</p>
<p><a href="/">Back to the login page</a></p>
</main>
</body>
</html>
`;
  c.header("cache-control", "no-store");
  return c.html(html, status);
}

function escape(s: string) {
  return s.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);
}

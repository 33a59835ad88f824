/** A stored text (a payload, headers, a body) shown pretty-printed when it is JSON, with a copy button; a sentence when there is none. */
import { prettyJson } from "../format";
import { CopyButton } from "./copy";

export function CodeBlock({ text, label, empty = "None." }: { text: string | null; label: string; empty?: string }) {
  if (!text) return <p className="muted">{empty}</p>;
  const pretty = prettyJson(text);
  return (
    <div>
      <pre className="code" aria-label={label}>
        {pretty.text}
      </pre>
      <div style={{ marginTop: 6 }}>
        <CopyButton text={pretty.text} label={`Copy ${label.toLowerCase()}`} />
      </div>
    </div>
  );
}

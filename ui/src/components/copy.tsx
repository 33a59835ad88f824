/** Copying to the clipboard: the button, and a read-only value with one. */
import { useEffect, useState } from "react";

/** Copies text: the Clipboard API when the page is a secure context, else a hidden textarea + execCommand. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall through to the old way
  }
  const ta = document.createElement("textarea");
  ta.value = text;
  ta.setAttribute("readonly", "");
  ta.style.position = "fixed";
  ta.style.opacity = "0";
  document.body.appendChild(ta);
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  ta.remove();
  return ok;
}

export function CopyButton({ text, label = "Copy", className = "btn small" }: { text: string; label?: string; className?: string }) {
  const [state, setState] = useState<"idle" | "ok" | "fail">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const t = setTimeout(() => setState("idle"), 1800);
    return () => clearTimeout(t);
  }, [state]);
  return (
    <button type="button" className={className} onClick={async () => setState((await copyText(text)) ? "ok" : "fail")} aria-live="polite">
      {state === "ok" ? "Copied" : state === "fail" ? "Select and copy" : label}
    </button>
  );
}

/** A read-only value with a copy button (ingest URLs, keys, secrets). */
export function CopyField({ value, label }: { value: string; label: string }) {
  return (
    <div className="copy-field">
      <input type="text" readOnly value={value} aria-label={label} onFocus={(e) => e.currentTarget.select()} />
      <CopyButton text={value} />
    </div>
  );
}

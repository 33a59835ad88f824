/** Short-lived notices in a corner ("Saved", "Could not…"), from anywhere in the app. */
import { useSyncExternalStore } from "react";

interface Toast {
  id: number;
  text: string;
  kind: "ok" | "error";
}
let toasts: Toast[] = [];
let toastSeq = 0;
const toastListeners = new Set<() => void>();

export function toast(text: string, kind: "ok" | "error" = "ok") {
  const t = { id: ++toastSeq, text, kind };
  toasts = [...toasts, t].slice(-3);
  toastListeners.forEach((l) => l());
  setTimeout(() => {
    toasts = toasts.filter((x) => x.id !== t.id);
    toastListeners.forEach((l) => l());
  }, 3500);
}

export function Toasts() {
  const list = useSyncExternalStore(
    (l) => {
      toastListeners.add(l);
      return () => toastListeners.delete(l);
    },
    () => toasts,
  );
  return (
    <div className="toasts" role="status" aria-live="polite">
      {list.map((t) => (
        <div key={t.id} className={`toast ${t.kind === "error" ? "error" : ""}`}>
          {t.text}
        </div>
      ))}
    </div>
  );
}

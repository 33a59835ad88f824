import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError, errorMessage } from "./api";
import { issueLine, nestedMessage, placeIssue } from "./issues";

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  /** Loads again (after a change this page made); keeps showing the old data meanwhile. */
  reload: () => Promise<void>;
  setData: (fn: (d: T | undefined) => T | undefined) => void;
}

/**
 * Runs a loader when its key changes and on reload(). A late answer for an old
 * key is dropped, so fast filter changes never show stale rows.
 */
export function useLoad<T>(loader: () => Promise<T>, key: unknown[]): Loaded<T> {
  const [data, setDataState] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const seq = useRef(0);
  const loaderRef = useRef(loader);
  loaderRef.current = loader;

  const run = useCallback(async () => {
    const mine = ++seq.current;
    setLoading(true);
    try {
      const d = await loaderRef.current();
      if (mine !== seq.current) return;
      setDataState(d);
      setError(null);
    } catch (e) {
      if (mine !== seq.current) return;
      // A 401 already sends the app to the login page; no message needed here.
      if (!(e instanceof ApiError && e.status === 401)) setError(errorMessage(e));
    } finally {
      if (mine === seq.current) setLoading(false);
    }
  }, []);

  useEffect(() => {
    void run();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, key);

  useEffect(
    () => () => {
      seq.current++;
    },
    [],
  );

  return { data, error, loading, reload: run, setData: (fn) => setDataState(fn) };
}

/** Calls fn every ms while enabled. */
export function useInterval(fn: () => void, ms: number | null) {
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => {
    if (ms === null) return;
    const t = setInterval(() => ref.current(), ms);
    return () => clearInterval(t);
  }, [ms]);
}

/** Form submission state: busy flag, the error split into per-field messages and a general one. */
export function useSubmit() {
  const [busy, setBusy] = useState(false);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);

  /**
   * Runs fn; on failure puts each validation message, in words, next to the
   * field it concerns (the longest of knownFields its path starts with, so a
   * form may name `filter_rules.0.value` as well as `filter_rules`), all of a
   * field's messages one per line, and everything else above the form.
   */
  const submit = useCallback(async <T,>(fn: () => Promise<T>, knownFields: readonly string[] = []): Promise<T | undefined> => {
    setBusy(true);
    setFieldErrors({});
    setFormError(null);
    try {
      return await fn();
    } catch (e) {
      if (e instanceof ApiError) {
        const fields: Record<string, string[]> = {};
        const rest: string[] = [];
        for (const issue of e.issues) {
          const place = issue.field ? placeIssue(issue.field, knownFields) : null;
          if (place) (fields[place.field] ??= []).push(nestedMessage(place.rest, issue.message));
          else rest.push(issueLine(issue));
        }
        setFieldErrors(Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, [...new Set(v)].join("\n")])));
        if (Object.keys(fields).length === 0 || rest.length > 0) {
          setFormError(rest.length > 0 && e.code === "validation_error" ? `${e.message}: ${rest.join("; ")}` : e.message);
        }
      } else {
        setFormError(errorMessage(e));
      }
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);

  const reset = useCallback(() => {
    setFieldErrors({});
    setFormError(null);
  }, []);

  return { busy, fieldErrors, formError, submit, reset, setFieldErrors, setFormError };
}

/**
 * A busy flag and an error message around one-off actions (delete, revoke, retry, redrive):
 * run(fn) clears the error, sets busy while fn runs, and shows what it throws.
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, setError, run };
}

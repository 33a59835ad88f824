import { useEffect, useState } from "react";
import { api, errorMessage } from "./api";
import type { JobProgress } from "./types";

/** Polls a background job (replay, redrive, bulk retry) every second until it completes. */
export function useJob(path: string | null) {
  const [job, setJob] = useState<JobProgress | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setJob(null);
    setError(null);
    if (!path) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      try {
        const j = await api.get<JobProgress>(path);
        if (stopped) return;
        setJob(j);
        if (j.status !== "completed") timer = setTimeout(tick, 1000);
      } catch (e) {
        if (!stopped) setError(errorMessage(e));
      }
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [path]);
  return { job, error };
}

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

/** Loads `fn()` now and whenever `deps` change; `reload` runs it again. */
export function useLoad<T>(fn: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: unknown; reload: () => Promise<void> } {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>(null);
  const live = useRef(true);
  const reload = useCallback(async () => {
    try {
      const d = await fn();
      if (live.current) {
        setData(d);
        setError(null);
      }
    } catch (e) {
      if (live.current) setError(e);
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  useEffect(() => {
    live.current = true;
    void reload();
    return () => {
      live.current = false;
    };
  }, [reload]);
  return { data, error, reload };
}

/** Calls `fn` every `ms` while `active`; used for live progress of videos still processing. */
export function usePoll(active: boolean, fn: () => unknown, ms = 2000): void {
  useEffect(() => {
    if (!active) return;
    const t = setInterval(fn, ms);
    return () => clearInterval(t);
  }, [active, fn, ms]);
}

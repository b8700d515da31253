import { useCallback, useEffect, useState } from 'react';

export type Loaded<T> = {
  data: T | undefined;
  problem: unknown;
  loading: boolean;
  reload: () => void;
};

/** Loads with `load` whenever `key` changes (and on `reload()`); the last answer wins. */
export function useLoad<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; problem: unknown; loading: boolean }>({
    data: undefined,
    problem: undefined,
    loading: true,
  });
  const [round, setRound] = useState(0);
  // `load` is a new function at every render; `key` says when it loads something else.
  const stableLoad = useCallback(load, [key]);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    stableLoad().then(
      (data) => current && setState({ data, problem: undefined, loading: false }),
      (problem: unknown) => current && setState({ data: undefined, problem, loading: false }),
    );
    return () => {
      current = false;
    };
  }, [stableLoad, round]);
  return { ...state, reload: () => setRound((value) => value + 1) };
}

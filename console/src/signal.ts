import { useEffect, useState } from "preact/hooks";

/** A tiny observable value, read by components through `useSignal`. */
export interface Signal<T> {
    value: T;
    subscribe(fn: (v: T) => void): () => void;
}

export function signal<T>(initial: T): Signal<T> {
    let v = initial;
    const subs = new Set<(v: T) => void>();
    return {
        get value() {
            return v;
        },
        set value(n: T) {
            v = n;
            for (const fn of [...subs]) fn(n);
        },
        subscribe(fn) {
            subs.add(fn);
            return () => subs.delete(fn);
        },
    };
}

export function useSignal<T>(s: Signal<T>): T {
    const [v, set] = useState(s.value);
    useEffect(() => {
        set(s.value);
        return s.subscribe(set);
    }, [s]);
    return v;
}

import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { ActivityFilter } from "../../api/query";
import { href, Link, setQuery } from "../../router";

/** The activities filter, kept in the URL: the text applies as it is typed (after a pause), the label on change. */
export function Filters({ filter }: { filter: ActivityFilter }): JSX.Element {
    const { text, label, kind } = filter;
    const [t, setT] = useState(text);
    const [l, setL] = useState(label);
    useEffect(() => setT(text), [text]);
    useEffect(() => setL(label), [label]);
    useEffect(() => {
        if (t === text) return;
        const h = window.setTimeout(() => setQuery({ q: t, cursor: null }, true), 350);
        return () => window.clearTimeout(h);
    }, [t]);
    return (
        <form
            class="filters"
            role="search"
            aria-label="Filter activities"
            onSubmit={(e) => {
                e.preventDefault();
                setQuery({ q: t, label: l, cursor: null });
            }}
        >
            <label>
                Text
                <input type="search" name="q" value={t} placeholder="name or description" onInput={(e) => setT((e.target as HTMLInputElement).value)} />
            </label>
            <label>
                Label
                <input
                    type="text"
                    name="label"
                    value={l}
                    placeholder="key=value"
                    onInput={(e) => setL((e.target as HTMLInputElement).value)}
                    onChange={(e) => setQuery({ label: (e.target as HTMLInputElement).value, cursor: null })}
                />
            </label>
            <label>
                Trigger
                <select name="kind" value={kind} onChange={(e) => setQuery({ kind: (e.target as HTMLSelectElement).value, cursor: null })}>
                    <option value="">any</option>
                    <option value="cron">cron</option>
                    <option value="interval">interval</option>
                    <option value="event">event</option>
                </select>
            </label>
            <button type="submit">Filter</button>
            {(text || label || kind) && (
                <Link href={href("/activities")} class="button ghost">
                    Clear
                </Link>
            )}
        </form>
    );
}

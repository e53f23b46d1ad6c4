import type { JSX } from "preact";
import type { Activity } from "../../api";

/** Flow control as configured (concurrency, rate limit, debounce) and as it stands now. */

export function FlowSection({ a }: { a: Activity }): JSX.Element | null {
    if (!a.flow && !a.flow_state) return null;
    const f = a.flow;
    const s = a.flow_state;
    return (
        <section class="block" aria-labelledby="flow-title">
            <h2 id="flow-title">Flow control</h2>
            <dl class="facts">
                {f?.concurrency && (
                    <>
                        <dt>Concurrency</dt>
                        <dd>
                            {f.concurrency.limit} per {f.concurrency.key ? <code>{f.concurrency.key}</code> : "activity"}, at the limit: {f.concurrency.on_limit ?? "queue"}
                        </dd>
                    </>
                )}
                {f?.rate_limit && (
                    <>
                        <dt>Rate limit</dt>
                        <dd>
                            {f.rate_limit.limit} per {f.rate_limit.period}
                            {f.rate_limit.key && (
                                <>
                                    {" "}
                                    per <code>{f.rate_limit.key}</code>
                                </>
                            )}
                            , at the limit: {f.rate_limit.on_limit ?? "queue"}
                        </dd>
                    </>
                )}
                {f?.debounce && (
                    <>
                        <dt>Debounce</dt>
                        <dd>
                            {f.debounce.period}
                            {f.debounce.key && (
                                <>
                                    {" "}
                                    per <code>{f.debounce.key}</code>
                                </>
                            )}
                        </dd>
                    </>
                )}
                {s && (
                    <>
                        <dt>Now</dt>
                        <dd>
                            {s.in_use} slots in use, {s.queued} queued
                        </dd>
                    </>
                )}
            </dl>
            {s && s.keys.length > 0 && (
                <table class="list compact">
                    <thead>
                        <tr>
                            <th scope="col">Key</th>
                            <th scope="col">In use</th>
                            <th scope="col">Queued</th>
                        </tr>
                    </thead>
                    <tbody>
                        {s.keys.map((k) => (
                            <tr key={k.key}>
                                <td data-label="Key">{k.key ? <code>{k.key}</code> : <span class="muted">(the activity)</span>}</td>
                                <td data-label="In use">{k.in_use}</td>
                                <td data-label="Queued">{k.queued}</td>
                            </tr>
                        ))}
                    </tbody>
                </table>
            )}
        </section>
    );
}

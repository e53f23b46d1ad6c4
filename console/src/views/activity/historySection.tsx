import type { JSX } from "preact";
import type { Activity } from "../../api";
import { useActivityHistory } from "../../api/audit";
import { relative } from "../../format";
import { href, Link } from "../../router";
import { ErrorBox } from "../../ui";
import { byWhom, ChangeDetail } from "../audit";

/** Who changed the activity, and how: its latest audit entries (admin keys only). */
export function HistorySection({ a, tick }: { a: Activity; tick: number }): JSX.Element {
    const history = useActivityHistory(a.id, tick);
    const items = history.data?.items ?? [];
    return (
        <section class="block" aria-labelledby="history-title">
            <div class="head">
                <h2 id="history-title">Changes</h2>
                <Link href={href("/audit", { subject_type: "activity", subject_id: a.id })}>All changes of this activity</Link>
            </div>
            <ErrorBox error={history.error} />
            {items.length === 0 ? (
                <p class="muted">No change recorded.</p>
            ) : (
                <ul class="plain" data-testid="activity-history">
                    {items.map((e) => (
                        <li key={e.seq}>
                            <strong>{e.operation.replace(/_activity$/, "").replaceAll("_", " ")}</strong> by {byWhom(e)} <span class="muted small">{relative(e.at)}</span>
                            <ChangeDetail e={e} />
                        </li>
                    ))}
                </ul>
            )}
        </section>
    );
}

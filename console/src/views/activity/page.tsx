import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { useActivity } from "../../api/activity";
import { href, Link } from "../../router";
import { useStream } from "../../stream";
import { ErrorBox, Loading } from "../../ui";
import { Actions } from "./actions";
import { AlertsSection } from "./alertsSection";
import { Facts } from "./facts";
import { FlowSection } from "./flowSection";
import { HeatmapSection } from "./heatmapSection";
import { HistorySection } from "./historySection";
import { can } from "../../api";
import { RecentRuns } from "./recentRuns";
import { TimelineSection } from "./timelineSection";

/** One activity: its facts and actions, timeline, calendar, recent runs, flow state and alerts, refreshed by the change stream. */

export function ActivityView({ id }: { id: string }): JSX.Element {
    const act = useActivity(id);
    const [tick, setTick] = useState(0);
    useStream(
        (c) => c.activity_id === id || c.subject === id,
        () => {
            act.reload();
            setTick((t) => t + 1);
        },
        400,
    );
    const a = act.data?.a;
    useEffect(() => {
        if (a) document.title = `${a.name} · ACP console`;
    }, [a?.name]);
    if (!a) {
        return act.error ? (
            <section>
                <h1>Activity</h1>
                <ErrorBox error={act.error} />
                <Link href={href("/activities")}>Back to the activities</Link>
            </section>
        ) : (
            <Loading what="the activity" />
        );
    }
    const scheduled = a.trigger.type !== "event";
    return (
        <section>
            <nav aria-label="Breadcrumb" class="small">
                <Link href={href("/activities")}>Activities</Link> /
            </nav>
            <div class="head">
                <h1>{a.name}</h1>
                <Actions a={a} reload={act.reload} />
            </div>
            <Facts a={a} />
            {scheduled ? (
                <TimelineSection a={a} tick={tick} />
            ) : (
                <p class="muted">An event-triggered activity has no nominal times; its runs are listed below.</p>
            )}
            <HeatmapSection a={a} tick={tick} />
            <div class="cols">
                <RecentRuns a={a} tick={tick} />
                <div>
                    <FlowSection a={a} />
                    <AlertsSection a={a} tick={tick} />
                    {can("admin") && <HistorySection a={a} tick={tick} />}
                </div>
            </div>
        </section>
    );
}

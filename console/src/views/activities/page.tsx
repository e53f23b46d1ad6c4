import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { can } from "../../api";
import { useActivities } from "../../api/activities";
import { useCalendarNames } from "../../api/calendars";
import { activityFilterOf } from "../../api/query";
import { activityZone, zoneOf } from "../../format";
import { href, Link, useLoc } from "../../router";
import { useStream } from "../../stream";
import { ErrorBox, Loading, Pager, useZoneMode, ZoneSwitch } from "../../ui";
import { Filters } from "./filters";
import { Row } from "./row";

/** The activities, filtered and paged by the URL, refreshed by the change stream. */

export function ActivitiesView(): JSX.Element {
    const loc = useLoc();
    const filter = activityFilterOf(loc.query);
    const cursor = loc.query.get("cursor") ?? "";
    const mode = useZoneMode();
    useEffect(() => {
        document.title = "Activities · ACP console";
    }, []);
    const list = useActivities(filter, cursor);
    const [tick, setTick] = useState(0);
    const calendars = useCalendarNames(tick);
    useStream(
        (c) => c.kind.startsWith("activity.") || c.kind.startsWith("run.") || c.kind.startsWith("alert."),
        () => {
            list.reload();
            setTick((t) => t + 1);
        },
        500,
    );
    const items = list.data?.items ?? [];
    return (
        <section>
            <div class="head">
                <h1>Activities</h1>
                {can("write") && (
                    <Link class="button" href={href("/activities/new")}>
                        New activity
                    </Link>
                )}
            </div>
            <Filters filter={filter} />
            <div class="toolbar">
                <ZoneSwitch />
                <span class="muted" aria-live="polite">
                    {list.loading ? "Refreshing…" : `${items.length} shown`}
                </span>
            </div>
            <ErrorBox error={list.error} />
            {list.data === undefined && list.loading ? (
                <Loading what="activities" />
            ) : items.length === 0 ? (
                <p class="empty">No activity matches. {can("write") && <Link href={href("/activities/new")}>Create one.</Link>}</p>
            ) : (
                <table class="list activities">
                    <caption class="sr-only">Activities</caption>
                    <thead>
                        <tr>
                            <th scope="col">Activity</th>
                            <th scope="col">Trigger</th>
                            <th scope="col">Next fire</th>
                            <th scope="col">Last run</th>
                            <th scope="col">Last 24 h</th>
                            <th scope="col">Alerts</th>
                            <th scope="col">State</th>
                        </tr>
                    </thead>
                    <tbody>
                        {items.map((a) => (
                            <Row a={a} key={a.id} zone={zoneOf(mode, activityZone(a))} tick={tick} calendars={calendars} />
                        ))}
                    </tbody>
                </table>
            )}
            <Pager next={list.data?.next_cursor} />
        </section>
    );
}

import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { can } from "../../api";
import { useActivityIndex } from "../../api/activities";
import { runFilterOf, type BulkKind } from "../../api/query";
import { useRuns } from "../../api/runs";
import { useLoc } from "../../router";
import { useStream } from "../../stream";
import { ErrorBox, Loading, Pager, useListZone } from "../../ui";
import { BulkDialog } from "./bulkDialog";
import { RunFilters } from "./filters";
import { RunTable } from "./runTable";

/** Runs across activities, filtered and paged by the URL, with bulk retry/cancel of the filter. */

export function RunsView(): JSX.Element {
    const loc = useLoc();
    const rq = runFilterOf(loc.query);
    const cursor = loc.query.get("cursor") ?? "";
    const zone = useListZone();
    useEffect(() => {
        document.title = "Runs · ACP console";
    }, []);
    const runs = useRuns(rq, cursor);
    const { list, names } = useActivityIndex();
    useStream((c) => c.kind.startsWith("run.") && (!rq.activity_id || c.activity_id === rq.activity_id), runs.reload, 500);
    const [bulk, setBulk] = useState<null | BulkKind>(null);
    const items = runs.data?.items ?? [];
    return (
        <section>
            <div class="head">
                <h1>Runs</h1>
                {can("write") && (
                    <div class="actions" role="toolbar" aria-label="Bulk actions on the filter">
                        <button type="button" onClick={() => setBulk("retry")}>
                            Retry matching…
                        </button>
                        <button type="button" class="ghost" onClick={() => setBulk("cancel")}>
                            Cancel matching…
                        </button>
                    </div>
                )}
            </div>
            <RunFilters rq={rq} activities={list} zone={zone} />
            <ErrorBox error={runs.error} />
            {runs.data === undefined && runs.loading ? (
                <Loading what="runs" />
            ) : items.length === 0 ? (
                <p class="empty">No run matches.</p>
            ) : (
                <RunTable runs={items} names={names} zone={zone} />
            )}
            <Pager next={runs.data?.next_cursor} />
            {bulk && <BulkDialog kind={bulk} rq={rq} names={names} onClose={() => setBulk(null)} onDone={runs.reload} />}
        </section>
    );
}

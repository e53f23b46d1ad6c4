// The alerts list (the activity page's own alerts are in activity.ts).
import { useAsync, type Async } from "../ui";
import { acp, unwrap, type Schemas } from "./client";
import { alertsQuery, type AlertFilter } from "./query";

export function useAlerts(f: AlertFilter, cursor: string): Async<Schemas["Page_AlertResponse"]> {
    return useAsync(() => unwrap(acp().GET("/v1/alerts", { params: { query: alertsQuery(f, cursor) } })), [f.state, f.kind, f.activity, cursor]);
}

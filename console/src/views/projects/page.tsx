import type { JSX } from "preact";
import { useEffect } from "preact/hooks";
import { auth } from "../../api";
import { useProjects, type Project } from "../../api/projects";
import { href, Link } from "../../router";
import { useSignal } from "../../signal";
import { ErrorBox, Loading } from "../../ui";

/** `used / limit`, or `used` with "no limit" when the quota is unset. */
function Quota({ used, limit, unit }: { used: number; limit: number | null | undefined; unit?: string }): JSX.Element {
    const over = limit !== null && limit !== undefined && used >= limit;
    return (
        <span class={over ? "quota full" : "quota"}>
            <strong>{used}</strong>
            {unit ? ` ${unit}` : ""} / {limit === null || limit === undefined ? <span class="muted">no limit</span> : limit}
        </span>
    );
}

function Row({ p }: { p: Project }): JSX.Element {
    const q = p.quotas;
    const u = p.usage;
    return (
        <tr data-project={p.id}>
            <td data-label="Project">
                <Link href={href("/activities", undefined, p.id)}>{p.id}</Link>
                <div class="muted small">{p.name}</div>
            </td>
            <td data-label="Weight">{p.weight}</td>
            <td data-label="Activities">
                <Quota used={u.activities} limit={q.activities} />
            </td>
            <td data-label="Runs running">
                <Quota used={u.runs_running} limit={q.runs_running} />
                {q.runs_guaranteed !== null && q.runs_guaranteed !== undefined && <div class="muted small">{q.runs_guaranteed} guaranteed</div>}
            </td>
            <td data-label="Events">
                <span>
                    <strong>{u.events_last_minute}</strong> in the last minute
                </span>
                <div class="muted small">
                    {q.events_per_second === null || q.events_per_second === undefined
                        ? "no rate limit"
                        : `${q.events_per_second}/s, burst ${q.events_burst ?? q.events_per_second}`}
                </div>
            </td>
            <td data-label="Sources">
                <Quota used={u.sources} limit={q.sources} />
            </td>
            <td data-label="Subscriptions">
                <Quota used={u.subscriptions} limit={q.subscriptions} />
            </td>
        </tr>
    );
}

/** Every project with its weight, quotas and what it uses now (operator keys). */
export function ProjectsView(): JSX.Element {
    const a = useSignal(auth);
    const operator = a.state === "in" && a.session.scope === "operator";
    useEffect(() => {
        document.title = "Projects · ACP console";
    }, []);
    const projects = useProjects(operator);
    if (!operator) {
        return (
            <section>
                <h1>Projects</h1>
                <p class="empty">Only an operator key can see every project.</p>
            </section>
        );
    }
    const items = projects.data ?? [];
    return (
        <section>
            <div class="head">
                <h1>Projects</h1>
                <button type="button" class="ghost" onClick={projects.reload} disabled={projects.loading}>
                    Refresh
                </button>
            </div>
            <p class="muted small">
                Each team's share of the service: its weight against other projects', its quotas and what it uses now. Open a project to act in it.
            </p>
            <ErrorBox error={projects.error} />
            {projects.data === undefined && projects.loading ? (
                <Loading what="projects" />
            ) : items.length === 0 ? (
                <p class="empty">No project.</p>
            ) : (
                <table class="list">
                    <caption class="sr-only">Projects, their quotas and usage</caption>
                    <thead>
                        <tr>
                            <th scope="col">Project</th>
                            <th scope="col">Weight</th>
                            <th scope="col">Activities</th>
                            <th scope="col">Runs running</th>
                            <th scope="col">Events</th>
                            <th scope="col">Sources</th>
                            <th scope="col">Subscriptions</th>
                        </tr>
                    </thead>
                    <tbody>
                        {items.map((p) => (
                            <Row key={p.id} p={p} />
                        ))}
                    </tbody>
                </table>
            )}
        </section>
    );
}

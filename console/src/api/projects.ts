// The projects' calls (scope operator): every project with its weight,
// quotas and what it uses now.
import { useAsync, type Async } from "../ui";
import { acp, unwrap, type Schemas } from "./client";

export type Project = Schemas["ProjectResponse"];

/** Every project, following the pages to the end (a handful, usually). */
async function allProjects(): Promise<Project[]> {
    const out: Project[] = [];
    let cursor: string | undefined;
    for (;;) {
        const query = cursor === undefined ? { limit: 200 } : { limit: 200, cursor };
        const page = await unwrap(acp().GET("/v1/projects", { params: { query } }));
        out.push(...page.items);
        if (!page.next_cursor) return out;
        cursor = page.next_cursor;
    }
}

/** Every project by ID; nothing is asked unless `enabled` (an operator). */
export function useProjects(enabled: boolean, tick = 0): Async<Project[]> {
    return useAsync(async () => (enabled ? (await allProjects()).sort((a, b) => a.id.localeCompare(b.id)) : []), [enabled, tick]);
}

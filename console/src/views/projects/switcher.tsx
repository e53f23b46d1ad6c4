import type { JSX } from "preact";
import { auth } from "../../api";
import { useProjects } from "../../api/projects";
import { href, navigate, useLoc } from "../../router";
import { useSignal } from "../../signal";

/** Where a switch lands: the same list in the other project (an ID does not carry over). */
function landing(path: string): string {
    const section = "/" + (path.split("/")[1] ?? "");
    return section === "/" || section === "/projects" ? "/activities" : section;
}

/**
 * The project the console acts in. An operator picks any project (each has
 * its own URL, `/p/<project>/…`); a project's key sees its own, read-only.
 */
export function ProjectSwitcher(): JSX.Element | null {
    const loc = useLoc();
    const a = useSignal(auth);
    const session = a.state === "in" ? a.session : null;
    const operator = session?.scope === "operator";
    const projects = useProjects(operator);
    if (!session) return null;
    const current = loc.project ?? (operator ? "default" : session.project) ?? "default";
    if (!operator) {
        return (
            <span class="project" data-project={current} title="The key's project: it acts in this project only">
                Project <strong>{current}</strong>
            </span>
        );
    }
    const ids = (projects.data ?? []).map((p) => p.id);
    if (!ids.includes(current)) ids.unshift(current);
    return (
        <label class="project inline">
            <span>Project</span>
            <select
                id="project-switcher"
                value={current}
                title={projects.error ?? "The project the console acts in"}
                onChange={(e) => navigate(href(landing(loc.path), undefined, e.currentTarget.value))}
            >
                {ids.map((id) => (
                    <option key={id} value={id}>
                        {id}
                    </option>
                ))}
            </select>
        </label>
    );
}

import type { JSX } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { can } from "../../api";
import { createActivity, updateActivity, useDefinition, type Definition } from "../../api/activities";
import { href, Link, navigate } from "../../router";
import { ErrorBox, Loading } from "../../ui";
import { EMPTY, fromActivity, requestOf, triggerOf, type FormState, type Req } from "./model";
import { Preview } from "./preview";
import { TaskRows } from "./taskRows";
import { TriggerFields } from "./triggerFields";

/** The definition form (new or edit), the trigger's next times previewed while typing. */

export function ActivityForm({ id }: { id?: string }): JSX.Element {
    const existing = useDefinition(id);
    useEffect(() => {
        document.title = `${id ? "Edit" : "New"} activity · ACP console`;
    }, [id]);
    if (!can("write")) {
        return (
            <section>
                <h1>{id ? "Edit activity" : "New activity"}</h1>
                <p>This key's scope cannot change activities.</p>
            </section>
        );
    }
    if (id && existing.data === undefined) return existing.error ? <ErrorBox error={existing.error} /> : <Loading what="the activity" />;
    return <Form existing={existing.data ?? null} />;
}

function Form({ existing }: { existing: Definition | null }): JSX.Element {
    const base = existing?.activity;
    const [f, setF] = useState<FormState>(() => (base ? fromActivity(base) : EMPTY));
    const [err, setErr] = useState<string | null>(null);
    const [busy, setBusy] = useState(false);
    const set = <K extends keyof FormState>(k: K, v: FormState[K]) => setF((s) => ({ ...s, [k]: v }));
    const trigger = useMemo(() => triggerOf(f, base?.trigger), [f.kind, f.cron, f.timezone, f.repeated, f.skipped, f.every, f.eventTypes, f.policy, f.catchupLimit, f.grace]);
    const submit = async (e: Event) => {
        e.preventDefault();
        setErr(null);
        let req: Req;
        try {
            req = requestOf(f, base);
        } catch (x) {
            setErr((x as Error).message);
            return;
        }
        setBusy(true);
        try {
            const a = existing ? await updateActivity(existing, req) : await createActivity(req);
            navigate(href(`/activities/${a.id}`));
        } catch (x) {
            setErr((x as Error).message);
        } finally {
            setBusy(false);
        }
    };
    return (
        <section>
            <div class="head">
                <h1>{base ? `Edit ${base.name}` : "New activity"}</h1>
                <Link href={base ? href(`/activities/${base.id}`) : href("/activities")}>Cancel</Link>
            </div>
            <form class="form" onSubmit={submit} aria-describedby="form-error">
                <div class="grid2">
                    <div>
                        <fieldset>
                            <legend>Activity</legend>
                            <label>
                                Name
                                <input name="name" required value={f.name} onInput={(e) => set("name", (e.target as HTMLInputElement).value)} />
                            </label>
                            <label>
                                Description
                                <input name="description" value={f.description} onInput={(e) => set("description", (e.target as HTMLInputElement).value)} />
                            </label>
                            <label>
                                Labels (key=value, comma-separated)
                                <input name="labels" value={f.labels} onInput={(e) => set("labels", (e.target as HTMLInputElement).value)} />
                            </label>
                            <label class="check">
                                <input type="checkbox" name="enabled" checked={f.enabled} onChange={(e) => set("enabled", (e.target as HTMLInputElement).checked)} /> Enabled
                            </label>
                        </fieldset>
                        <TriggerFields f={f} set={set} />
                    </div>
                    <div>
                        <Preview trigger={trigger} />
                    </div>
                </div>
                <TaskRows tasks={f.tasks} setTasks={(tasks) => set("tasks", tasks)} />
                <details open={f.advanced.trim() !== "{}" && f.advanced.trim() !== ""}>
                    <summary>Flow control, alerts, notifications, run timeout (JSON)</summary>
                    <label>
                        <span>
                            An object with any of <code>flow</code> (concurrency, rate_limit, debounce), <code>alerts</code>, <code>notify</code>, <code>run_timeout</code>, as in the API
                        </span>
                        <textarea name="advanced" rows={6} spellcheck={false} value={f.advanced} onInput={(e) => set("advanced", (e.target as HTMLTextAreaElement).value)} />
                    </label>
                </details>
                <div id="form-error">{err && <ErrorBox error={err} />}</div>
                <div class="actions">
                    <button type="submit" disabled={busy}>
                        {busy ? "Saving…" : base ? "Save changes" : "Create activity"}
                    </button>
                </div>
            </form>
        </section>
    );
}

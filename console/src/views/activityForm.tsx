import type { JSX } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { acp, ApiError, can, problemText, unwrap, type Activity, type Schemas, type Trigger } from "../api";
import { fmtTime, triggerWords } from "../format";
import { href, Link, navigate } from "../router";
import { ErrorBox, Loading, useAsync } from "../ui";

type Req = Schemas["ActivityRequest"];
type Task = Schemas["TaskBody"];

interface TaskRow {
    task_type: string;
    name: string;
    url: string;
    config: string;
    original: Task | null;
}

interface FormState {
    /** flow, alerts, notify and run_timeout as JSON (fields without a control of their own). */
    advanced: string;
    name: string;
    description: string;
    labels: string;
    enabled: boolean;
    kind: "cron" | "interval" | "event";
    cron: string;
    timezone: string;
    repeated: "" | "first" | "last" | "both";
    skipped: "" | "shift" | "skip";
    every: string;
    eventTypes: string;
    policy: "skip" | "catchup" | "compress";
    catchupLimit: string;
    grace: string;
    tasks: TaskRow[];
}

const EMPTY: FormState = {
    advanced: "{}",
    name: "",
    description: "",
    labels: "",
    enabled: true,
    kind: "cron",
    cron: "30 2 * * *",
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC",
    repeated: "",
    skipped: "",
    every: "PT1M",
    eventTypes: "",
    policy: "skip",
    catchupLimit: "10",
    grace: "PT60S",
    tasks: [{ task_type: "noop", name: "", url: "", config: "{}", original: null }],
};

function fromActivity(a: Activity): FormState {
    const t = a.trigger;
    const cron = t.type === "cron" ? t : undefined;
    const scheduled = t.type === "event" ? undefined : t;
    const adv: Record<string, unknown> = {};
    if (a.flow) adv["flow"] = a.flow;
    if (a.alerts) adv["alerts"] = a.alerts;
    if (a.notify) adv["notify"] = a.notify;
    if (a.run_timeout) adv["run_timeout"] = a.run_timeout;
    return {
        advanced: JSON.stringify(adv, null, 2),
        name: a.name,
        description: a.description ?? "",
        labels: Object.entries(a.labels ?? {})
            .map(([k, v]) => `${k}=${String(v)}`)
            .join(", "),
        enabled: a.enabled,
        kind: t.type,
        cron: cron?.cron ?? EMPTY.cron,
        timezone: cron?.timezone ?? "UTC",
        repeated: cron?.dst?.repeated ?? "",
        skipped: cron?.dst?.skipped ?? "",
        every: t.type === "interval" ? t.every : EMPTY.every,
        eventTypes: (t.type === "event" ? t.event_types : []).join(", "),
        policy: scheduled?.misfire_policy ?? "skip",
        catchupLimit: String(scheduled?.catchup_limit ?? 10),
        grace: scheduled?.misfire_grace ?? "PT60S",
        tasks: a.tasks.map((k) => {
            const cfg = { ...(k.config ?? {}) } as Record<string, unknown>;
            const url = k.task_type === "webhook" && typeof cfg["url"] === "string" ? (cfg["url"] as string) : "";
            if (url) delete cfg["url"];
            return { task_type: k.task_type, name: k.name ?? "", url, config: JSON.stringify(cfg), original: k };
        }),
    };
}

function triggerOf(f: FormState, base?: Trigger): Trigger {
    if (f.kind === "event") {
        return { type: "event", event_types: f.eventTypes.split(/[\s,]+/).filter(Boolean) };
    }
    // What the form does not show (start_at, end_at, jitter) stays as it was.
    const kept = base && base.type !== "event" && base.type === f.kind ? { start_at: base.start_at, end_at: base.end_at, jitter: base.jitter } : {};
    const misfire = {
        misfire_policy: f.policy,
        misfire_grace: f.grace || null,
        catchup_limit: f.catchupLimit ? Number(f.catchupLimit) : null,
    };
    if (f.kind === "cron") {
        const dst = f.repeated || f.skipped ? { ...(f.repeated ? { repeated: f.repeated } : {}), ...(f.skipped ? { skipped: f.skipped } : {}) } : null;
        return { ...kept, type: "cron", cron: f.cron, timezone: f.timezone || "UTC", dst, ...misfire };
    }
    return { ...kept, type: "interval", every: f.every, ...misfire };
}

function requestOf(f: FormState, base?: Activity): Req {
    const labels: Record<string, string> = {};
    for (const part of f.labels.split(/[,\n]+/)) {
        const p = part.trim();
        if (!p) continue;
        const i = p.indexOf("=");
        if (i <= 0) throw new Error(`Label "${p}" is not key=value.`);
        labels[p.slice(0, i).trim()] = p.slice(i + 1).trim();
    }
    const tasks: Task[] = f.tasks.map((r, i) => {
        let cfg: Record<string, unknown>;
        try {
            cfg = r.config.trim() ? (JSON.parse(r.config) as Record<string, unknown>) : {};
        } catch {
            throw new Error(`Task ${i + 1}: the configuration is not JSON.`);
        }
        if (r.task_type === "webhook") cfg["url"] = r.url;
        // What was typed goes as it is: the API names what is wrong with it.
        return { ...(r.original ?? {}), task_type: r.task_type, name: r.name || null, config: cfg } as Task;
    });
    const req: Req = {
        name: f.name,
        description: f.description || null,
        labels,
        enabled: f.enabled,
        trigger: triggerOf(f, base?.trigger),
        tasks,
    };
    let adv: Record<string, unknown>;
    try {
        adv = f.advanced.trim() ? (JSON.parse(f.advanced) as Record<string, unknown>) : {};
    } catch {
        throw new Error("Flow control, alerts and notifications: not JSON.");
    }
    if (typeof adv !== "object" || adv === null || Array.isArray(adv)) throw new Error("Flow control, alerts and notifications: a JSON object, please.");
    for (const k of Object.keys(adv)) {
        if (!["flow", "alerts", "notify", "run_timeout"].includes(k)) throw new Error(`Flow control, alerts and notifications: "${k}" is not one of flow, alerts, notify, run_timeout.`);
    }
    Object.assign(req, adv);
    // Kept as it was: the legacy field has no control.
    if (base?.dedupe_key_strategy) req.dedupe_key_strategy = base.dedupe_key_strategy;
    return req;
}

const ZONES: string[] = (() => {
    try {
        return (Intl as unknown as { supportedValuesOf(k: string): string[] }).supportedValuesOf("timeZone");
    } catch {
        return ["UTC"];
    }
})();

export function ActivityForm({ id }: { id?: string }): JSX.Element {
    const existing = useAsync(async () => {
        if (!id) return null;
        const { data, error, response } = await acp().GET("/v1/activities/{id}", { params: { path: { id } } });
        if (!data) throw new ApiError(problemText(error, response), response.status, error);
        return { activity: data, etag: response.headers.get("etag") };
    }, [id]);
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

function Form({ existing }: { existing: { activity: Activity; etag: string | null } | null }): JSX.Element {
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
            let a: Activity;
            if (base) {
                a = await unwrap(
                    acp().PUT("/v1/activities/{id}", {
                        params: { path: { id: base.id }, header: existing?.etag ? { "If-Match": existing.etag } : {} },
                        body: req,
                    }),
                );
            } else {
                a = await unwrap(acp().POST("/v1/activities", { body: req }));
            }
            navigate(href(`/activities/${a.id}`));
        } catch (x) {
            setErr((x as Error).message);
        } finally {
            setBusy(false);
        }
    };
    const onTask = (i: number, k: keyof TaskRow, v: string) =>
        setF((s) => ({ ...s, tasks: s.tasks.map((t, j) => (j === i ? { ...t, [k]: v } : t)) }));
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
                        <fieldset>
                            <legend>Trigger</legend>
                            <label>
                                Kind
                                <select name="kind" value={f.kind} onChange={(e) => set("kind", (e.target as HTMLSelectElement).value as FormState["kind"])}>
                                    <option value="cron">cron</option>
                                    <option value="interval">interval</option>
                                    <option value="event">event</option>
                                </select>
                            </label>
                            {f.kind === "cron" && (
                                <>
                                    <label>
                                        Cron expression (5 fields)
                                        <input name="cron" value={f.cron} spellcheck={false} onInput={(e) => set("cron", (e.target as HTMLInputElement).value)} />
                                    </label>
                                    <label>
                                        Time zone
                                        <input name="timezone" list="zones" value={f.timezone} onInput={(e) => set("timezone", (e.target as HTMLInputElement).value)} />
                                    </label>
                                    <datalist id="zones">
                                        {ZONES.map((z) => (
                                            <option value={z} key={z} />
                                        ))}
                                    </datalist>
                                    <div class="row">
                                        <label>
                                            DST repeated hour
                                            <select name="repeated" value={f.repeated} onChange={(e) => set("repeated", (e.target as HTMLSelectElement).value as FormState["repeated"])}>
                                                <option value="">default (first)</option>
                                                <option value="first">first</option>
                                                <option value="last">last</option>
                                                <option value="both">both</option>
                                            </select>
                                        </label>
                                        <label>
                                            DST missing hour
                                            <select name="skipped" value={f.skipped} onChange={(e) => set("skipped", (e.target as HTMLSelectElement).value as FormState["skipped"])}>
                                                <option value="">default (shift)</option>
                                                <option value="shift">shift</option>
                                                <option value="skip">skip</option>
                                            </select>
                                        </label>
                                    </div>
                                </>
                            )}
                            {f.kind === "interval" && (
                                <label>
                                    Every (ISO-8601 duration, e.g. PT30S, PT1H)
                                    <input name="every" value={f.every} onInput={(e) => set("every", (e.target as HTMLInputElement).value)} />
                                </label>
                            )}
                            {f.kind === "event" && (
                                <label>
                                    Event types (comma-separated)
                                    <input name="event_types" value={f.eventTypes} onInput={(e) => set("eventTypes", (e.target as HTMLInputElement).value)} />
                                </label>
                            )}
                            {f.kind !== "event" && (
                                <div class="row">
                                    <label>
                                        Misfire policy
                                        <select name="misfire_policy" value={f.policy} onChange={(e) => set("policy", (e.target as HTMLSelectElement).value as FormState["policy"])}>
                                            <option value="skip">skip</option>
                                            <option value="catchup">catchup</option>
                                            <option value="compress">compress</option>
                                        </select>
                                    </label>
                                    <label>
                                        Catch-up limit
                                        <input name="catchup_limit" type="number" min="1" max="1000" value={f.catchupLimit} onInput={(e) => set("catchupLimit", (e.target as HTMLInputElement).value)} />
                                    </label>
                                    <label>
                                        Misfire grace
                                        <input name="misfire_grace" value={f.grace} onInput={(e) => set("grace", (e.target as HTMLInputElement).value)} />
                                    </label>
                                </div>
                            )}
                        </fieldset>
                    </div>
                    <div>
                        <Preview trigger={trigger} />
                    </div>
                </div>
                <fieldset>
                    <legend>Tasks (run in order)</legend>
                    {f.tasks.map((t, i) => (
                        <div class="task-row" key={i} role="group" aria-label={`Task ${i + 1}`}>
                            <label>
                                Task type
                                <input name={`task_type_${i}`} list="task-types" value={t.task_type} onInput={(e) => onTask(i, "task_type", (e.target as HTMLInputElement).value)} />
                            </label>
                            <label>
                                Task name
                                <input name={`task_name_${i}`} value={t.name} onInput={(e) => onTask(i, "name", (e.target as HTMLInputElement).value)} />
                            </label>
                            {t.task_type === "webhook" && (
                                <label class="grow">
                                    Webhook URL
                                    <input name={`task_url_${i}`} type="url" required value={t.url} onInput={(e) => onTask(i, "url", (e.target as HTMLInputElement).value)} />
                                </label>
                            )}
                            <label class="grow">
                                Task configuration (JSON)
                                <input name={`task_config_${i}`} value={t.config} spellcheck={false} onInput={(e) => onTask(i, "config", (e.target as HTMLInputElement).value)} />
                            </label>
                            <button
                                type="button"
                                class="ghost"
                                disabled={f.tasks.length === 1}
                                aria-label={`Remove task ${i + 1}`}
                                onClick={() => setF((s) => ({ ...s, tasks: s.tasks.filter((_, j) => j !== i) }))}
                            >
                                Remove
                            </button>
                        </div>
                    ))}
                    <datalist id="task-types">
                        <option value="noop" />
                        <option value="webhook" />
                    </datalist>
                    <button type="button" class="ghost" onClick={() => setF((s) => ({ ...s, tasks: [...s.tasks, { task_type: "noop", name: "", url: "", config: "{}", original: null }] }))}>
                        Add task
                    </button>
                </fieldset>
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

/** The next nominal times of the trigger being typed, from `POST /v1/schedules/preview`. */
export function Preview({ trigger }: { trigger: Trigger }): JSX.Element {
    const [state, setState] = useState<{ times?: Schemas["PreviewTime"][]; error?: string; busy: boolean }>({ busy: false });
    const key = JSON.stringify(trigger);
    useEffect(() => {
        if (trigger.type === "event") {
            setState({ busy: false });
            return;
        }
        let live = true;
        const h = window.setTimeout(() => {
            setState((s) => ({ ...s, busy: true }));
            acp()
                .POST("/v1/schedules/preview", { body: { trigger, count: 8 } })
                .then(({ data, error, response }) => {
                    if (!live) return;
                    if (data) setState({ times: data.next, busy: false });
                    else setState({ error: problemText(error, response), busy: false });
                })
                .catch((e: unknown) => live && setState({ error: String(e), busy: false }));
        }, 300);
        return () => {
            live = false;
            window.clearTimeout(h);
        };
    }, [key]);
    const zone = trigger.type === "cron" ? trigger.timezone || "UTC" : "UTC";
    return (
        <section class="preview card" aria-labelledby="preview-title" aria-live="polite" aria-busy={state.busy}>
            <h2 id="preview-title">Next times</h2>
            <p class="small" data-testid="trigger-words">
                {triggerWords(trigger)}
            </p>
            {trigger.type === "event" ? (
                <p class="muted">An event trigger runs when a matching event arrives.</p>
            ) : state.error ? (
                <p class="error">{state.error}</p>
            ) : state.times ? (
                <ol class="times">
                    {state.times.map((t) => (
                        <li key={t.at}>
                            <time dateTime={t.at}>{fmtTime(t.at, zone)}</time>
                            {t.note !== "normal" && <span class="badge dst"> {t.note === "dst_gap" ? "DST gap" : "DST repeat"}</span>}
                        </li>
                    ))}
                </ol>
            ) : (
                <p class="muted">…</p>
            )}
        </section>
    );
}

// The definition form's state and the request it makes: no DOM and no
// runtime import, so that it runs under `node --test`.
import type { Activity, Schemas, Trigger } from "../../api/client";

export type Req = Schemas["ActivityRequest"];
type Task = Schemas["TaskBody"];

export interface TaskRow {
    task_type: string;
    name: string;
    url: string;
    config: string;
    original: Task | null;
}

export interface FormState {
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
    /** The business calendar's ID; empty for none. */
    calendarId: string;
    calendarMode: "exclude" | "business_days";
    roll: "skip" | "next" | "previous";
    beyond: "run" | "skip" | "pause";
    tasks: TaskRow[];
}

export const EMPTY: FormState = {
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
    calendarId: "",
    calendarMode: "business_days",
    roll: "skip",
    beyond: "run",
    tasks: [newTask()],
};

/** A task row as "Add task" adds it. */
export function newTask(): TaskRow {
    return { task_type: "noop", name: "", url: "", config: "{}", original: null };
}

/** The form showing `a`'s definition (a webhook's URL in a field of its own). */
export function fromActivity(a: Activity): FormState {
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
        calendarId: scheduled?.calendar?.id ?? "",
        calendarMode: scheduled?.calendar?.mode ?? "business_days",
        roll: scheduled?.calendar?.roll ?? "skip",
        beyond: scheduled?.calendar?.beyond_coverage ?? "run",
        tasks: a.tasks.map((k) => {
            const cfg = { ...(k.config ?? {}) } as Record<string, unknown>;
            const url = k.task_type === "webhook" && typeof cfg["url"] === "string" ? (cfg["url"] as string) : "";
            if (url) delete cfg["url"];
            return { task_type: k.task_type, name: k.name ?? "", url, config: JSON.stringify(cfg), original: k };
        }),
    };
}

/** The trigger of the form; what it has no control for stays as in `base`. */
export function triggerOf(f: FormState, base?: Trigger): Trigger {
    if (f.kind === "event") {
        return { type: "event", event_types: f.eventTypes.split(/[\s,]+/).filter(Boolean) };
    }
    // What the form does not show (start_at, end_at, jitter) stays as it was.
    const kept = base && base.type !== "event" && base.type === f.kind ? { start_at: base.start_at, end_at: base.end_at, jitter: base.jitter } : {};
    const misfire = {
        misfire_policy: f.policy,
        misfire_grace: f.grace || null,
        catchup_limit: f.catchupLimit ? Number(f.catchupLimit) : null,
        // Saved with PUT: a trigger without a calendar has none.
        ...(f.calendarId ? { calendar: calendarOf(f) } : {}),
    };
    if (f.kind === "cron") {
        const dst = f.repeated || f.skipped ? { ...(f.repeated ? { repeated: f.repeated } : {}), ...(f.skipped ? { skipped: f.skipped } : {}) } : null;
        return { ...kept, type: "cron", cron: f.cron, timezone: f.timezone || "UTC", dst, ...misfire };
    }
    return { ...kept, type: "interval", every: f.every, ...misfire };
}

/** The trigger's business calendar, `null` for none; a roll is for business days only. */
export function calendarOf(f: FormState): Schemas["CalendarBody"] | null {
    if (!f.calendarId) return null;
    return {
        id: f.calendarId,
        mode: f.calendarMode,
        roll: f.calendarMode === "business_days" ? f.roll : "skip",
        beyond_coverage: f.beyond,
    };
}

/** The request the form makes; throws, naming the field, what is not even JSON or key=value. */
export function requestOf(f: FormState, base?: Activity): Req {
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

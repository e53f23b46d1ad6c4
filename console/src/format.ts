import type { Activity, Schemas, Trigger } from "./api";

/** Which zone times are shown in: the activity's, the browser's or UTC. */
export type ZoneMode = "activity" | "local" | "utc";

export function zoneOf(mode: ZoneMode, activityZone?: string | null): string {
    if (mode === "utc") return "UTC";
    if (mode === "local") return Intl.DateTimeFormat().resolvedOptions().timeZone;
    return activityZone || "UTC";
}

export function activityZone(a: Pick<Activity, "trigger">): string {
    return a.trigger.type === "cron" ? a.trigger.timezone || "UTC" : "UTC";
}

const fmtCache = new Map<string, Intl.DateTimeFormat>();
function fmt(zone: string, kind: "full" | "short" | "time" | "day"): Intl.DateTimeFormat {
    const k = `${zone}|${kind}`;
    let f = fmtCache.get(k);
    if (!f) {
        const o: Intl.DateTimeFormatOptions = { timeZone: zone, hourCycle: "h23" };
        if (kind === "full" || kind === "short" || kind === "day") {
            o.year = "numeric";
            o.month = "2-digit";
            o.day = "2-digit";
        }
        if (kind !== "day") {
            o.hour = "2-digit";
            o.minute = "2-digit";
        }
        if (kind === "full" || kind === "time") o.second = "2-digit";
        if (kind === "full") o.timeZoneName = "short";
        try {
            f = new Intl.DateTimeFormat("en-CA", o);
        } catch {
            f = new Intl.DateTimeFormat("en-CA", { ...o, timeZone: "UTC" });
        }
        fmtCache.set(k, f);
    }
    return f;
}

/** "2026-12-06 14:03:00 CET" in `zone`. */
export function fmtTime(iso: string | null | undefined, zone: string, kind: "full" | "short" | "time" | "day" = "full"): string {
    if (!iso) return "—";
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return iso;
    return fmt(zone, kind).format(d).replace(",", "");
}

/** "3 min ago", "in 2 h". */
export function relative(iso: string | null | undefined, now = Date.now()): string {
    if (!iso) return "";
    const ms = new Date(iso).getTime() - now;
    const a = Math.abs(ms);
    let s: string;
    if (a < 45_000) s = `${Math.round(a / 1000)} s`;
    else if (a < 3_600_000) s = `${Math.round(a / 60_000)} min`;
    else if (a < 86_400_000 * 2) s = `${Math.round(a / 3_600_000)} h`;
    else s = `${Math.round(a / 86_400_000)} d`;
    return ms >= 0 ? `in ${s}` : `${s} ago`;
}

export function duration(ms: number | null | undefined): string {
    if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
    if (ms < 1000) return `${Math.round(ms)} ms`;
    const s = ms / 1000;
    if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
    const m = Math.floor(s / 60);
    if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
    const h = Math.floor(m / 60);
    return `${h} h ${m % 60} min`;
}

export function runDuration(r: { started_at?: string | null; finished_at?: string | null }): string {
    if (!r.started_at) return "—";
    const end = r.finished_at ? new Date(r.finished_at).getTime() : Date.now();
    const d = duration(end - new Date(r.started_at).getTime());
    return r.finished_at ? d : `${d} so far`;
}

/** ISO-8601 duration → seconds (PT30S, PT1H30M, P1D). */
export function isoSeconds(d: string | null | undefined): number | null {
    if (!d) return null;
    const m = /^P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(d);
    if (!m) return null;
    const [, w, dd, h, mi, s] = m;
    return (Number(w ?? 0) * 7 + Number(dd ?? 0)) * 86400 + Number(h ?? 0) * 3600 + Number(mi ?? 0) * 60 + Number(s ?? 0);
}

/** "PT1H30M" → "1 h 30 min". */
export function isoWords(d: string | null | undefined): string {
    const s = isoSeconds(d);
    if (s === null) return d ?? "";
    const parts: string[] = [];
    let r = s;
    const days = Math.floor(r / 86400);
    r -= days * 86400;
    const h = Math.floor(r / 3600);
    r -= h * 3600;
    const m = Math.floor(r / 60);
    r -= m * 60;
    if (days) parts.push(`${days} d`);
    if (h) parts.push(`${h} h`);
    if (m) parts.push(`${m} min`);
    if (r) parts.push(`${r} s`);
    return parts.join(" ") || "0 s";
}

const DOW = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MON = ["", "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

function two(n: string): string {
    return n.padStart(2, "0");
}

/** 1 → "1st", 3 → "3rd", 11 → "11th", 22 → "22nd". */
function ordinal(n: number): string {
    const tens = n % 100;
    const suffix = tens >= 11 && tens <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th");
    return `${n}${suffix}`;
}

/** A business-day offset in words: `BD3` → "the 3rd business day", `BDL` → "the last business day", `BDL-1` → "the business day before the last"; `null` for any other field. */
export function businessDayWords(field: string): string | null {
    const m = /^BD(?:(\d{1,2})|L(?:-(\d{1,2}))?)$/i.exec(field);
    if (!m) return null;
    if (m[1]) return `the ${ordinal(Number(m[1]))} business day`;
    const back = Number(m[2] ?? 0);
    if (back === 0) return "the last business day";
    return back === 1 ? "the business day before the last" : `the ${ordinal(back)} business day before the last`;
}

/** A five-field cron expression in words, as far as it reads naturally. */
export function cronWords(expr: string): string {
    const f = expr.trim().split(/\s+/);
    if (f.length !== 5) return `cron ${expr}`;
    const [mi, h, dom, mon, dow] = f as [string, string, string, string, string];
    const num = /^\d+$/;
    let when: string;
    if (mi === "*" && h === "*") when = "every minute";
    else if (/^\*\/\d+$/.test(mi) && h === "*") when = `every ${mi.slice(2)} minutes`;
    else if (num.test(mi) && h === "*") when = `every hour at :${two(mi)}`;
    else if (num.test(mi) && /^\*\/\d+$/.test(h)) when = `every ${h.slice(2)} hours at :${two(mi)}`;
    else if (num.test(mi) && num.test(h)) when = `${two(h)}:${two(mi)}`;
    else if (num.test(mi) && /^[\d,]+$/.test(h)) when = h.split(",").map((x) => `${two(x)}:${two(mi)}`).join(", ");
    else return `cron ${expr}`;
    const dayly = dom === "*" && mon === "*" && dow === "*";
    if (dayly) return num.test(h) || /^[\d,]+$/.test(h) ? `${when} every day` : when;
    let days = "";
    if (dom === "*" && mon === "*") {
        if (dow === "1-5") days = "on weekdays";
        else if (/^[0-7](,[0-7])*$/.test(dow)) days = `on ${dow.split(",").map((d) => DOW[Number(d) % 7]).join(", ")}`;
        else return `cron ${expr}`;
    } else if (dow === "*" && businessDayWords(dom)) {
        const months = mon === "*" ? "" : ` of ${mon.split(",").map((m) => MON[Number(m)] ?? m).join(", ")}`;
        days = `on ${businessDayWords(dom)}${months}`;
    } else if (dow === "*" && num.test(dom)) {
        days = `on day ${dom} of ${mon === "*" ? "every month" : mon.split(",").map((m) => MON[Number(m)] ?? m).join(", ")}`;
    } else return `cron ${expr}`;
    return `${when} ${days}`;
}

/**
 * How a trigger uses its calendar, named by `name` when known: "us-nyse
 * (business days, roll next)". A business-day offset's times are business
 * days already: no roll is named for them.
 */
export function calendarWords(c: Schemas["CalendarBody"], name?: string | null, offset = false): string {
    const parts: string[] = [];
    if ((c.mode ?? "business_days") === "exclude") parts.push("non-business days excluded");
    else {
        parts.push("business days");
        if (!offset && (c.roll ?? "skip") !== "skip") parts.push(`roll ${c.roll}`);
    }
    if ((c.beyond_coverage ?? "run") !== "run") parts.push(`beyond coverage: ${c.beyond_coverage}`);
    return `${name || `calendar ${c.id.slice(0, 8)}`} (${parts.join(", ")})`;
}

/** The trigger in words: "02:30 every day, Europe/Berlin; DST: first/shift; misfire: skip", then its calendar (named `calendarName`). */
export function triggerWords(t: Trigger, calendarName?: string | null): string {
    if (t.type === "event") return `on event ${(t.event_types ?? []).join(", ")}`;
    const parts: string[] = [];
    if (t.type === "cron") {
        const zone = t.timezone || "UTC";
        const dst = `DST: ${t.dst?.repeated ?? "first"}/${t.dst?.skipped ?? "shift"}`;
        parts.push(`${cronWords(t.cron ?? "")}, ${zone}; ${dst}`);
    } else {
        parts.push(`every ${isoWords(t.every)}`);
    }
    const pol = t.misfire_policy ?? "skip";
    let m = `misfire: ${pol}`;
    if (pol === "skip") m += ` (grace ${isoWords(t.misfire_grace ?? "PT60S")})`;
    if (pol === "catchup") m += ` (limit ${t.catchup_limit ?? 10})`;
    parts.push(m);
    const words = parts.join("; ");
    if (!t.calendar) return words;
    const offset = t.type === "cron" && businessDayWords(t.cron?.trim().split(/\s+/)[2] ?? "") !== null;
    return `${words} · ${calendarWords(t.calendar, calendarName, offset)}`;
}

/** A `cron` or `interval` trigger: one with misfire fields and times. */
export type ScheduledTrigger = Exclude<Trigger, { type: "event" }>;

/** The trigger when it is scheduled; an event trigger has no misfire fields. */
export function scheduledOf(t: Trigger): ScheduledTrigger | undefined {
    return t.type === "event" ? undefined : t;
}

/** The words for what the misfire policy does on resume. */
export function policyOnResume(t: Trigger): string {
    const s = scheduledOf(t);
    switch (s?.misfire_policy ?? "skip") {
        case "skip":
            return "Misfire policy skip: the times missed while paused do not run; the schedule continues from now.";
        case "catchup":
            return `Misfire policy catchup: the most recent ${s?.catchup_limit ?? 10} missed times run (backfilled), older ones are skipped.`;
        case "compress":
            return "Misfire policy compress: one run for the latest missed time, its window reaching back to where the last covered window ended.";
    }
}

/** Human-readable label text: "team=support, env=prod". */
export function labelsText(labels: Record<string, unknown> | null | undefined): string[] {
    return Object.entries(labels ?? {}).map(([k, v]) => `${k}=${String(v)}`);
}

/** The UTC offset (ms) of `zone` at instant `t`. */
function offsetAt(t: number, zone: string): number {
    const f = new Intl.DateTimeFormat("en-US", {
        timeZone: zone,
        hourCycle: "h23",
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
        hour: "2-digit",
        minute: "2-digit",
        second: "2-digit",
    });
    const p: Record<string, number> = {};
    for (const x of f.formatToParts(new Date(t))) if (x.type !== "literal") p[x.type] = Number(x.value);
    const asUtc = Date.UTC(p["year"]!, p["month"]! - 1, p["day"]!, p["hour"]! % 24, p["minute"]!, p["second"]!);
    return asUtc - Math.floor(t / 1000) * 1000;
}

/**
 * A wall time "2026-03-29T02:30" in `zone` → the instant (ISO, UTC). As the
 * service's default DST policy reads them: a wall time that happens twice is
 * its first occurrence, one in a gap moves on by the gap (02:30 → 03:30).
 */
export function wallToIso(wall: string, zone: string): string | null {
    const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(wall);
    if (!m) return null;
    const naive = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0));
    // The offsets a day before and after: a zone changes its offset at most once in between.
    const before = offsetAt(naive - 86_400_000, zone);
    const after = offsetAt(naive + 86_400_000, zone);
    const fitting = [before, after].filter((o) => offsetAt(naive - o, zone) === o);
    const t = fitting.length > 0 ? naive - Math.max(...fitting) : naive - before;
    return new Date(t).toISOString();
}

/** The instant as a wall time "2026-03-29T02:30" in `zone` (for datetime-local inputs). */
export function isoToWall(iso: string, zone: string): string {
    const t = new Date(iso).getTime();
    const d = new Date(t + offsetAt(t, zone));
    return d.toISOString().slice(0, 16);
}

/** Nominal times per second of a trigger, an upper estimate (for chunking requests). */
export function rateOf(t: Trigger): number {
    if (t.type === "interval") {
        const s = isoSeconds(t.every);
        return s && s > 0 ? 1 / s : 1;
    }
    if (t.type === "cron" && t.cron) {
        const f = t.cron.trim().split(/\s+/);
        const count = (field: string | undefined, size: number): number => {
            if (!field || field === "*") return size;
            let n = 0;
            for (const part of field.split(",")) {
                const [range, step] = part.split("/");
                const s = Number(step ?? 1) || 1;
                if (range === "*") n += Math.ceil(size / s);
                else if (range && range.includes("-")) {
                    const [a, b] = range.split("-").map(Number);
                    n += Math.floor(((b ?? 0) - (a ?? 0)) / s) + 1;
                } else n += 1;
            }
            return Math.min(n, size);
        };
        return (count(f[0], 60) * count(f[1], 24)) / 86400;
    }
    return 1 / 60;
}

import type { JSX } from "preact";
import { businessDayWords } from "../../format";
import { useCalendars } from "../../api/calendars";
import type { FormState } from "./model";

const ZONES: string[] = (() => {
    try {
        return (Intl as unknown as { supportedValuesOf(k: string): string[] }).supportedValuesOf("timeZone");
    } catch {
        return ["UTC"];
    }
})();

/** The trigger's fields: cron (with zone and DST choices), interval or event types, and the misfire policy. */
export function TriggerFields({ f, set }: { f: FormState; set: <K extends keyof FormState>(k: K, v: FormState[K]) => void }): JSX.Element {
    return (
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
            {f.kind !== "event" && <CalendarFields f={f} set={set} />}
        </fieldset>
    );
}

/** The business calendar the times answer to (one of the project's), how, and past its coverage. */
function CalendarFields({ f, set }: { f: FormState; set: <K extends keyof FormState>(k: K, v: FormState[K]) => void }): JSX.Element {
    const list = useCalendars("");
    const calendars = list.data?.items ?? [];
    // A calendar named by the activity but beyond the first page still shows.
    const known = !f.calendarId || calendars.some((c) => c.id === f.calendarId);
    // A business-day offset's times are business days: nothing to roll.
    const offset = f.kind === "cron" ? businessDayWords(f.cron.trim().split(/\s+/)[2] ?? "") : null;
    return (
        <div class="row" data-testid="calendar-fields">
            <label>
                Business calendar
                <select name="calendar" value={f.calendarId} onChange={(e) => set("calendarId", (e.target as HTMLSelectElement).value)}>
                    <option value="">none</option>
                    {calendars.map((c) => (
                        <option value={c.id} key={c.id}>
                            {c.name} ({c.timezone})
                        </option>
                    ))}
                    {!known && <option value={f.calendarId}>{f.calendarId}</option>}
                </select>
            </label>
            {f.calendarId && (
                <>
                    <label>
                        Calendar mode
                        <select name="calendar_mode" value={f.calendarMode} onChange={(e) => set("calendarMode", (e.target as HTMLSelectElement).value as FormState["calendarMode"])}>
                            <option value="business_days">business days</option>
                            <option value="exclude">exclude non-business days</option>
                        </select>
                    </label>
                    {f.calendarMode === "business_days" && offset && (
                        <p class="muted small" data-testid="offset-note">
                            The cron names {offset} of the month: a business day, so no roll applies.
                        </p>
                    )}
                    {f.calendarMode === "business_days" && !offset && (
                        <label>
                            On a non-business day
                            <select name="calendar_roll" value={f.roll} onChange={(e) => set("roll", (e.target as HTMLSelectElement).value as FormState["roll"])}>
                                <option value="skip">skip</option>
                                <option value="next">roll to the next business day</option>
                                <option value="previous">roll to the previous business day</option>
                            </select>
                        </label>
                    )}
                    <label>
                        Beyond coverage
                        <select name="beyond_coverage" value={f.beyond} onChange={(e) => set("beyond", (e.target as HTMLSelectElement).value as FormState["beyond"])}>
                            <option value="run">run (judge by what is known)</option>
                            <option value="skip">skip</option>
                            <option value="pause">skip and pause</option>
                        </select>
                    </label>
                </>
            )}
            {list.error && <p class="error">{list.error}</p>}
        </div>
    );
}

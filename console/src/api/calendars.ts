// The business calendars' calls: the list, one calendar with its ETag, its
// days of a year, and the writes (create, import, merge-patch, delete).
import { useAsync, type Async } from "../ui";
import { acp, ApiError, problemText, unwrap, type Schemas } from "./client";
import { pageQuery } from "./query";

export type Calendar = Schemas["CalendarResponse"];
export type Day = Schemas["Day"];
export type Holiday = Schemas["Holiday"];
export type WorkingDay = Schemas["WorkingDay"];

export function useCalendars(cursor: string, tick = 0): Async<Schemas["Page_CalendarResponse"]> {
    return useAsync(() => unwrap(acp().GET("/v1/calendars", { params: { query: pageQuery(cursor) } })), [cursor, tick]);
}

/** The project's calendars' names by ID (the first 200), for naming the calendar a trigger uses. */
export function useCalendarNames(tick = 0): Map<string, string> {
    const list = useAsync(() => unwrap(acp().GET("/v1/calendars", { params: { query: pageQuery(null, 200) } })), [tick]);
    return new Map((list.data?.items ?? []).map((c) => [c.id, c.name]));
}

/** The calendar and its ETag (sent back as If-Match by every edit). */
export function useCalendar(id: string, tick: number): Async<{ c: Calendar; etag: string | null }> {
    return useAsync(async () => {
        const { data, error, response } = await acp().GET("/v1/calendars/{id}", { params: { path: { id } } });
        if (!data) throw new ApiError(problemText(error, response), response.status, error);
        return { c: data, etag: response.headers.get("etag") };
    }, [id, tick]);
}

/** Every date of `year` with what it is in the calendar. */
export function useYearDays(id: string, year: number, tick: number): Async<Schemas["CalendarDays"]> {
    return useAsync(
        () => unwrap(acp().GET("/v1/calendars/{id}/days", { params: { path: { id }, query: { from: `${year}-01-01`, to: `${year}-12-31` } } })),
        [id, year, tick],
    );
}

/** The holidays of `year` in the calendar `id` (none without one): their names by date (`2026-07-03`). */
export function useHolidays(id: string | undefined, year: number, tick: number): Async<Map<string, string>> {
    return useAsync(async () => {
        const holidays = new Map<string, string>();
        if (!id) return holidays;
        const days = await unwrap(acp().GET("/v1/calendars/{id}/days", { params: { path: { id }, query: { from: `${year}-01-01`, to: `${year}-12-31` } } }));
        for (const d of days.days) if (d.kind === "holiday") holidays.set(d.date, d.name ?? "holiday");
        return holidays;
    }, [id, year, tick]);
}

export function createCalendar(body: Schemas["CalendarRequest"]): Promise<Calendar> {
    return unwrap(acp().POST("/v1/calendars", { body }));
}

/** A calendar made from an iCalendar file's text. */
export function importCalendar(name: string, timezone: string, ics: string): Promise<Schemas["ImportResponse"]> {
    const query: { name?: string; timezone?: string } = {};
    if (name) query.name = name;
    if (timezone) query.timezone = timezone;
    return unwrap(
        acp().POST("/v1/calendars:import", {
            params: { query },
            headers: { "content-type": "text/calendar" },
            body: ics,
            bodySerializer: (b: unknown) => String(b),
        }),
    );
}

/** A merge patch of the calendar, refused (412) when it changed since `etag`. */
export function patchCalendar(id: string, etag: string | null, patch: Partial<Schemas["CalendarRequest"]>): Promise<Calendar> {
    return unwrap(
        acp().PATCH("/v1/calendars/{id}", {
            params: { path: { id }, header: etag ? { "If-Match": etag } : {} },
            headers: { "content-type": "application/merge-patch+json" },
            body: patch,
        }),
    );
}

export function deleteCalendar(id: string, etag: string | null): Promise<unknown> {
    return unwrap(acp().DELETE("/v1/calendars/{id}", { params: { path: { id }, header: etag ? { "If-Match": etag } : {} } }));
}

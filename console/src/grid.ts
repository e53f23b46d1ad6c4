/**
 * The arithmetic of the console's two grids, kept free of the DOM (and of
 * imports) so that it runs under `node --test`: the timeline strip (a cell
 * per nominal time, rows of a fixed span) and the calendar heatmap (a column
 * per week, a row per weekday, Monday first).
 */

/** How a window of nominal times is laid out on the timeline's canvas. */
export interface Layout {
    /** Left margin holding each row's start time (0 when there is one row). */
    gutter: number;
    /** The time (ms) one row covers. */
    rowSpan: number;
    rows: number;
    rowH: number;
    /** A cell's width before the gap between cells. */
    cellW: number;
    /** The width the cells share (the canvas width without the gutter). */
    width: number;
    height: number;
}

/** A cell's rectangle on the canvas, in CSS pixels. */
export interface Rect {
    x: number;
    y: number;
    w: number;
    h: number;
}

/** The spans a row may cover: round wall-clock spans, 5 minutes to a week. */
export const ROW_SPANS = [300, 600, 900, 1800, 3600, 7200, 10800, 14400, 21600, 28800, 43200, 86400, 172800, 604800].map((s) => s * 1000);

/**
 * `n` nominal times of `[from, to)` on a canvas `full` pixels wide: one row
 * while every cell gets 8 px; otherwise rows of the first round span that
 * makes at most 120 rows and cells at least 3 px wide.
 */
export function layoutOf(n: number, from: number, to: number, full: number): Layout {
    const total = to - from;
    const gutter = n > (full - 52) / 8 ? 52 : 0;
    const width = full - gutter;
    const period = n > 0 ? total / n : total;
    let rowSpan = total;
    if (n > width / 8) {
        rowSpan = ROW_SPANS.find((s) => total / s <= 120 && s / period <= width / 3) ?? total / Math.ceil(n / Math.max(1, Math.floor(width / 3)));
        if (rowSpan > total) rowSpan = total;
    }
    const rows = Math.max(1, Math.ceil(total / rowSpan - 1e-9));
    const rowH = rows === 1 ? 40 : Math.max(6, Math.min(28, Math.floor(560 / rows)));
    const cellW = Math.max(1, (width * period) / rowSpan);
    return { gutter, rowSpan, rows, rowH, cellW, width, height: rows * rowH };
}

/** The row of time `t` and its x on the canvas (the "now" marker's place). */
export function placeOf(L: Layout, from: number, t: number): { row: number; x: number } {
    const d = t - from;
    const row = Math.min(L.rows - 1, Math.floor(d / L.rowSpan));
    return { row, x: L.gutter + ((d - row * L.rowSpan) / L.rowSpan) * L.width };
}

/** The cell of the nominal time `t`: a 1 px gap between cells 4 px wide or more, and between rows. */
export function cellRect(L: Layout, from: number, t: number): Rect {
    const { row, x } = placeOf(L, from, t);
    const gap = L.cellW >= 4 ? 1 : 0;
    return { x, y: row * L.rowH, w: Math.max(1, L.cellW - gap), h: L.rowH - (L.rows > 1 ? 1 : 0) };
}

/** The index of the last of the sorted `times` at or before `t` (0 when `t` precedes them all). */
export function lastAtOrBefore(times: ArrayLike<number>, t: number): number {
    let lo = 0;
    let hi = times.length - 1;
    while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (times[mid]! <= t) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/**
 * The cell under the point (`x`, `y`) of the canvas (CSS pixels from its top
 * left), or null between cells: the last time at or before the point's time,
 * if the point is on its rectangle (narrow cells count as 3 px, ±1 px).
 */
export function cellAt(L: Layout, from: number, times: ArrayLike<number>, x: number, y: number): number | null {
    if (times.length === 0) return null;
    const row = Math.floor(y / L.rowH);
    const t = from + row * L.rowSpan + ((x - L.gutter) / L.width) * L.rowSpan;
    const i = lastAtOrBefore(times, t);
    const r = cellRect(L, from, times[i]!);
    return x >= r.x - 1 && x <= r.x + Math.max(r.w, 3) + 1 && y >= r.y && y <= r.y + L.rowH ? i : null;
}

/** How far ArrowUp/ArrowDown move: the times in one row. */
export function cellsPerRow(L: Layout, from: number, to: number, n: number): number {
    return Math.max(1, Math.round(L.rowSpan / ((to - from) / n)));
}

/** The next focus of the timeline for a key, or null for a key it does not take. */
export function moveFocus(key: string, focus: number | null, n: number, perRow: number): number | null {
    const i = focus ?? -1;
    switch (key) {
        case "ArrowRight":
            return Math.min(n - 1, i + 1);
        case "ArrowLeft":
            return i < 0 ? 0 : Math.max(0, i - 1);
        case "ArrowDown":
            return Math.min(n - 1, i < 0 ? 0 : i + perRow);
        case "ArrowUp":
            return Math.max(0, i - perRow);
        case "Home":
            return 0;
        case "End":
            return n - 1;
        default:
            return null;
    }
}

const DAY = 86_400_000;

/** The calendar heatmap of a year: a column per week (Monday first), a row per weekday. */
export interface Calendar {
    /** Its first day's weekday, Monday 0 … Sunday 6: the empty cells before it. */
    offset: number;
    /** Midnight UTC of each day of the year. */
    days: Date[];
    weeks: number;
    width: number;
    height: number;
    /** The top left of day `i` (0 = 1 January). */
    dayAt(i: number): { x: number; y: number };
    /** Where month `m` (0 = January) is labelled: the column of its first day. */
    monthX(m: number): number;
    /** The y of the weekday labels' baselines (Mon, Wed, Fri). */
    weekdayY(i: number): number;
}

export const CAL = { cell: 11, gap: 2, left: 28, top: 14 } as const;

export function calendarOf(year: number): Calendar {
    const { cell, gap, left, top } = CAL;
    const first = Date.UTC(year, 0, 1);
    const offset = (new Date(first).getUTCDay() + 6) % 7;
    const days: Date[] = [];
    for (let t = first; new Date(t).getUTCFullYear() === year; t += DAY) days.push(new Date(t));
    const weeks = Math.ceil((days.length + offset) / 7);
    const pitch = cell + gap;
    const dayAt = (i: number) => ({ x: left + Math.floor((i + offset) / 7) * pitch, y: top + ((i + offset) % 7) * pitch });
    return {
        offset,
        days,
        weeks,
        width: left + weeks * pitch,
        height: top + 7 * pitch,
        dayAt,
        monthX: (m) => dayAt(Math.floor((Date.UTC(year, m, 1) - first) / DAY)).x,
        weekdayY: (i) => top + (i * 2 + 1) * pitch - 3,
    };
}

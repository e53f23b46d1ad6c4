// The timeline's cells and the calendar's days: where each time lands.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { calendarOf, cellAt, cellRect, cellsPerRow, lastAtOrBefore, layoutOf, moveFocus, placeOf } from "../src/grid.js";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const from = Date.parse("2026-06-01T00:00:00Z");
/** `n` times `step` apart from `from`. */
const every = (step: number, n: number) => Float64Array.from({ length: n }, (_, i) => from + i * step);
const close = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) < 1e-6, `${what}: ${actual}, not ${expected}`);

describe("layoutOf: the zooms of the timeline on a 1000 px canvas", () => {
    const cases: [string, number, number, { gutter: number; rowSpan: number; rows: number; rowH: number; cellW: number; height: number }][] = [
        // 24 cells of 41.7 px: one row, no labels.
        ["a day of an hourly cron", 24, DAY, { gutter: 0, rowSpan: DAY, rows: 1, rowH: 40, cellW: 1000 / 24, height: 40 }],
        // 60 cells of 16.7 px still fit one row.
        ["an hour of an every-minute cron", 60, HOUR, { gutter: 0, rowSpan: HOUR, rows: 1, rowH: 40, cellW: 1000 / 60, height: 40 }],
        // 1440 cells: rows of 15 minutes (96 rows, the first span ≤ 120 rows), 948 px after the 52 px of labels.
        ["a day of an every-minute cron", 1440, DAY, { gutter: 52, rowSpan: 15 * MIN, rows: 96, rowH: 6, cellW: 948 / 15, height: 576 }],
        // 10,080 cells: rows of two hours, 84 of them, 120 cells of 7.9 px each.
        ["a week of an every-minute cron", 10_080, 7 * DAY, { gutter: 52, rowSpan: 2 * HOUR, rows: 84, rowH: 6, cellW: 948 / 120, height: 504 }],
        // 43,200 cells: no round span keeps cells 3 px wide, so 137 rows of 316 cells.
        ["a month of an every-minute cron", 43_200, 30 * DAY, { gutter: 52, rowSpan: (30 * DAY) / 137, rows: 137, rowH: 6, cellW: (948 * MIN * 137) / (30 * DAY), height: 822 }],
        ["an empty window", 0, DAY, { gutter: 0, rowSpan: DAY, rows: 1, rowH: 40, cellW: 1000, height: 40 }],
    ];
    for (const [name, n, span, want] of cases) {
        test(name, () => {
            const L = layoutOf(n, from, from + span, 1000);
            assert.equal(L.gutter, want.gutter);
            assert.equal(L.width, 1000 - want.gutter);
            close(L.rowSpan, want.rowSpan, "rowSpan");
            assert.equal(L.rows, want.rows);
            assert.equal(L.rowH, want.rowH);
            close(L.cellW, want.cellW, "cellW");
            assert.equal(L.height, want.height);
        });
    }
    test("a wider canvas widens the cells, not the rows' span", () => {
        const L = layoutOf(1440, from, from + DAY, 2000);
        assert.equal(L.rowSpan, 15 * MIN);
        close(L.cellW, 1948 / 15, "cellW");
    });
});

describe("cells", () => {
    const day = layoutOf(24, from, from + DAY, 1000);
    const minutes = layoutOf(1440, from, from + DAY, 1000);
    test("an hourly cell: its hour's share of the one row, a 1 px gap", () => {
        const r = cellRect(day, from, from + 5 * HOUR);
        close(r.x, (5 / 24) * 1000, "x");
        assert.equal(r.y, 0);
        close(r.w, 1000 / 24 - 1, "w");
        assert.equal(r.h, 40);
    });
    test("a minute's cell: its row of 15 minutes, after the labels", () => {
        // 01:01 is in row 4 (01:00–01:15), one fifteenth along.
        const r = cellRect(minutes, from, from + HOUR + MIN);
        close(r.x, 52 + 948 / 15, "x");
        assert.equal(r.y, 4 * 6);
        close(r.w, 948 / 15 - 1, "w");
        assert.equal(r.h, 5);
    });
    test("cells under 4 px wide have no gap", () => {
        const month = layoutOf(43_200, from, from + 30 * DAY, 1000);
        assert.equal(cellRect(month, from, from).w, month.cellW);
        assert.equal(cellRect(month, from, from).h, 5);
    });
    test("'now' at 13:37 is in row 54, 7/15 along", () => {
        const p = placeOf(minutes, from, from + 13 * HOUR + 37 * MIN);
        assert.equal(p.row, 54);
        close(p.x, 52 + (7 / 15) * 948, "x");
    });
    test("the end of the window stays in the last row", () => {
        assert.equal(placeOf(minutes, from, from + DAY).row, 95);
    });
});

describe("pointing at cells", () => {
    const hourly = every(HOUR, 24);
    const day = layoutOf(24, from, from + DAY, 1000);
    test("lastAtOrBefore", () => {
        const t = [10, 20, 30];
        for (const [at, i] of [[5, 0], [10, 0], [19, 0], [20, 1], [25, 1], [30, 2], [99, 2]] as const) assert.equal(lastAtOrBefore(t, at), i, `${at}`);
    });
    test("a point on a cell is that cell, to its last pixel", () => {
        assert.equal(cellAt(day, from, hourly, 210, 20), 5);
        assert.equal(cellAt(day, from, hourly, 249.5, 39), 5);
        assert.equal(cellAt(day, from, hourly, 250.5, 0), 6);
        assert.equal(cellAt(day, from, hourly, 999, 20), 23);
    });
    test("a point where no time is is no cell", () => {
        // Two times in a window laid out for 24: 05:00 has no cell.
        const sparse = Float64Array.from([from, from + 10 * HOUR]);
        assert.equal(cellAt(day, from, sparse, 210, 20), null);
        assert.equal(cellAt(day, from, sparse, 20, 20), 0);
        assert.equal(cellAt(day, from, new Float64Array(0), 20, 20), null);
    });
    test("rows: a point in row 4 of the minutes' grid", () => {
        const minutes = layoutOf(1440, from, from + DAY, 1000);
        const times = every(MIN, 1440);
        // 01:01 (index 61): x of its cell plus a pixel, y in row 4.
        assert.equal(cellAt(minutes, from, times, 52 + 948 / 15 + 1, 4 * 6 + 2), 61);
        // In the labels left of row 4: the time before the row's first, whose cell is in row 3.
        assert.equal(cellAt(minutes, from, times, 10, 4 * 6 + 2), null);
    });
});

describe("the keyboard", () => {
    test("a row holds as many times as its span", () => {
        assert.equal(cellsPerRow(layoutOf(1440, from, from + DAY, 1000), from, from + DAY, 1440), 15);
        assert.equal(cellsPerRow(layoutOf(10_080, from, from + 7 * DAY, 1000), from, from + 7 * DAY, 10_080), 120);
        assert.equal(cellsPerRow(layoutOf(24, from, from + DAY, 1000), from, from + DAY, 24), 24);
    });
    const cases: [string, number | null, number | null][] = [
        ["ArrowRight", null, 0],
        ["ArrowRight", 5, 6],
        ["ArrowRight", 99, 99],
        ["ArrowLeft", null, 0],
        ["ArrowLeft", 0, 0],
        ["ArrowLeft", 5, 4],
        ["ArrowDown", null, 0],
        ["ArrowDown", 5, 20],
        ["ArrowDown", 90, 99],
        ["ArrowUp", 20, 5],
        ["ArrowUp", 5, 0],
        ["Home", 50, 0],
        ["End", 3, 99],
        ["a", 3, null],
    ];
    for (const [key, focus, next] of cases) test(`${key} from ${focus} in 100 times, 15 a row`, () => assert.equal(moveFocus(key, focus, 100, 15), next));
});

describe("the calendar: weeks in columns, Monday first", () => {
    test("2026 starts on a Thursday", () => {
        const c = calendarOf(2026);
        assert.equal(c.offset, 3);
        assert.equal(c.days.length, 365);
        assert.equal(c.days[0]!.toISOString(), "2026-01-01T00:00:00.000Z");
        assert.equal(c.days[364]!.toISOString(), "2026-12-31T00:00:00.000Z");
        assert.equal(c.weeks, 53);
        assert.equal(c.width, 28 + 53 * 13);
        assert.equal(c.height, 14 + 7 * 13);
        // 1 January: first column, fourth row (Thursday).
        assert.deepEqual(c.dayAt(0), { x: 28, y: 14 + 3 * 13 });
        // Monday 5 January: second column, first row.
        assert.deepEqual(c.dayAt(4), { x: 28 + 13, y: 14 });
        // 1 February is day 31: column 4 (its Sunday is in the week of 26 January).
        assert.equal(c.monthX(1), 28 + 4 * 13);
        assert.equal(c.monthX(0), 28);
        // Wednesday's label sits just above its row.
        assert.equal(c.weekdayY(1), 14 + 3 * 13 - 3);
    });
    test("leap year 2024 starts on a Monday and ends on a Tuesday", () => {
        const c = calendarOf(2024);
        assert.equal(c.offset, 0);
        assert.equal(c.days.length, 366);
        assert.equal(c.weeks, 53);
        assert.deepEqual(c.dayAt(365), { x: 28 + 52 * 13, y: 14 + 13 });
    });
    test("a year starting on a Sunday needs 54 columns when it is a leap year", () => {
        // 2012: 1 January a Sunday, 366 days: 6 + 366 = 372 cells, 54 weeks.
        const c = calendarOf(2012);
        assert.equal(c.offset, 6);
        assert.equal(c.weeks, 54);
    });
});

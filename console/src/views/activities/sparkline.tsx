import type { JSX } from "preact";
import type { Schemas } from "../../api";
import { colour } from "../../palette";

type Buckets = Schemas["RunStatsBucket"][];

/** 24 hourly bars of an activity's runs, stacked by outcome. */
export function Sparkline({ buckets, width = 120, height = 28 }: { buckets: Buckets; width?: number; height?: number }): JSX.Element {
    const n = Math.max(buckets.length, 24);
    const max = Math.max(1, ...buckets.map((b) => b.total));
    const bw = width / n;
    const order: (keyof Schemas["RunStatusCounts"])[] = ["succeeded", "failed", "timed_out", "cancelled", "skipped", "running", "queued"];
    const rects: JSX.Element[] = [];
    let total = 0;
    let failed = 0;
    buckets.forEach((b, i) => {
        let y = height;
        total += b.total;
        failed += b.counts.failed + b.counts.timed_out;
        for (const k of order) {
            const v = b.counts[k];
            if (!v) continue;
            const h = (v / max) * (height - 2);
            y -= h;
            rects.push(<rect key={`${i}${k}`} x={i * bw + 0.5} y={y} width={Math.max(1, bw - 1)} height={h} fill={colour(k)} />);
        }
    });
    return (
        <svg class="spark" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`Last 24 hours: ${total} runs, ${failed} failed`}>
            <line x1="0" x2={width} y1={height - 0.5} y2={height - 0.5} class="axis" />
            {rects}
        </svg>
    );
}

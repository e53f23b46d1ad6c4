import type { JSX } from "preact";
import type { Schemas } from "../../api";
import { fmtTime } from "../../format";
import { words } from "../../palette";

/** Nominal times with the action taken (or planned) for each: backfill, resume. */

export function TimesTable({ times, zone }: { times: Schemas["NominalTimeOutcome"][]; zone: string }): JSX.Element {
    return (
        <div class="scroll" tabIndex={0} role="region" aria-label="Nominal times and their actions">
            <table class="list compact" data-testid="times">
                <thead>
                    <tr>
                        <th scope="col">Nominal time ({zone})</th>
                        <th scope="col">Action</th>
                        <th scope="col">Reason</th>
                    </tr>
                </thead>
                <tbody>
                    {times.map((t) => (
                        <tr key={t.scheduled_for} data-action={t.action}>
                            <td>
                                <time dateTime={t.scheduled_for}>{fmtTime(t.scheduled_for, zone)}</time>
                            </td>
                            <td>{t.action}</td>
                            <td>
                                {t.reason ? words(t.reason) : ""}
                                {t.calendar && <div class="small muted">{t.calendar}</div>}
                            </td>
                        </tr>
                    ))}
                </tbody>
            </table>
        </div>
    );
}

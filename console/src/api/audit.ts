// The audit log's calls (scope admin): its entries by filter, and one
// activity's history of changes.
import { useAsync, type Async } from "../ui";
import { acp, unwrap, type QueryOf, type Schemas } from "./client";
import { pageQuery } from "./query";

export type AuditEntry = Schemas["AuditEntryResponse"];
export const SUBJECT_TYPES = ["activity", "run", "calendar", "source", "subscription", "api_key", "project"] as const;

export interface AuditFilter {
    operation?: string | undefined;
    subjectType?: string | undefined;
    subjectId?: string | undefined;
    keyId?: string | undefined;
}

export function useAudit(f: AuditFilter, cursor: string): Async<Schemas["Page_AuditEntryResponse"]> {
    return useAsync(() => {
        const query: QueryOf<"list_audit"> = { ...pageQuery(cursor) };
        if (f.operation) query.operation = f.operation;
        if (f.subjectType) query.subject_type = f.subjectType;
        if (f.subjectId) query.subject_id = f.subjectId;
        if (f.keyId) query.key_id = f.keyId;
        return unwrap(acp().GET("/v1/audit", { params: { query } }));
    }, [f.operation, f.subjectType, f.subjectId, f.keyId, cursor]);
}

/** Who changed the activity, newest first. */
export function useActivityHistory(id: string, tick: number): Async<Schemas["Page_AuditEntryResponse"]> {
    return useAsync(() => unwrap(acp().GET("/v1/audit", { params: { query: { subject_type: "activity", subject_id: id, limit: 10 } } })), [id, tick]);
}

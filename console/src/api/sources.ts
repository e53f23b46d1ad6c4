// The sources' calls: the list with each source's live status, one source,
// its rejected messages.
import { useAsync, type Async } from "../ui";
import { acp, unwrap, type Schemas } from "./client";
import { pageQuery } from "./query";

export type Source = Schemas["SourceResponse"];

/** A page of sources, each with its live status (the list has none: each source is asked; few sources). */
export function useSources(cursor: string): Async<{ items: Source[]; next: string | null | undefined }> {
    return useAsync(async () => {
        const page = await unwrap(acp().GET("/v1/sources", { params: { query: pageQuery(cursor) } }));
        const items = await Promise.all(page.items.map((s) => unwrap(acp().GET("/v1/sources/{id}", { params: { path: { id: s.id } } })).catch(() => s)));
        return { items, next: page.next_cursor };
    }, [cursor]);
}

export function useSource(id: string): Async<Source> {
    return useAsync(() => unwrap(acp().GET("/v1/sources/{id}", { params: { path: { id } } })), [id]);
}

export function useRejected(id: string, cursor: string): Async<Schemas["Page_RejectedMessage"]> {
    return useAsync(() => unwrap(acp().GET("/v1/sources/{id}/rejected", { params: { path: { id }, query: pageQuery(cursor) } })), [id, cursor]);
}

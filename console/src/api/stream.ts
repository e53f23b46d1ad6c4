// The change stream's calls: a stream token, and the stream's address.
import { acp } from "./client";
import { streamQuery } from "./query";

/** A fresh stream token, or the HTTP status that refused one (undefined: no answer). */
export async function streamToken(): Promise<{ token: string } | { status: number | undefined }> {
    try {
        const { data, response } = await acp().POST("/v1/stream/tokens");
        return data ? { token: data.token } : { status: response.status };
    } catch {
        return { status: undefined };
    }
}

/** The change stream's URL, with a token (authentication on) and the last change seen. */
export function streamUrl(token: string | null, since: string | null): string {
    return `${location.origin}/v1/stream?${streamQuery(token, since)}`;
}

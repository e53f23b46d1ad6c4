// The API keys' calls: the list, create (the token is in that answer only)
// and revoke. Every one needs an admin key.
import { useAsync, type Async } from "../ui";
import { acp, unwrap, type Schemas } from "./client";

export type Key = Schemas["KeyResponse"];
export type CreatedKey = Schemas["CreatedKeyResponse"];

export function useKeys(): Async<Schemas["KeyList"]> {
    return useAsync(() => unwrap(acp().GET("/v1/keys")), []);
}

export function createKey(body: Schemas["CreateKeyRequest"]): Promise<CreatedKey> {
    return unwrap(acp().POST("/v1/keys", { body }));
}

export function revokeKey(id: string): Promise<Key> {
    return unwrap(acp().POST("/v1/keys/{id}/revoke", { params: { path: { id } } }));
}

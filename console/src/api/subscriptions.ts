// The subscriptions' calls: the list, one subscription, its deliveries.
import { useAsync, type Async } from "../ui";
import { acp, unwrap, type Schemas } from "./client";
import { pageQuery } from "./query";

export function useSubscriptions(cursor: string): Async<Schemas["Page_SubscriptionResponse"]> {
    return useAsync(() => unwrap(acp().GET("/v1/subscriptions", { params: { query: pageQuery(cursor) } })), [cursor]);
}

export function useSubscription(id: string): Async<Schemas["SubscriptionResponse"]> {
    return useAsync(() => unwrap(acp().GET("/v1/subscriptions/{id}", { params: { path: { id } } })), [id]);
}

export function useDeliveries(id: string, cursor: string): Async<Schemas["Page_DeliveryResponse"]> {
    return useAsync(() => unwrap(acp().GET("/v1/subscriptions/{id}/deliveries", { params: { path: { id }, query: pageQuery(cursor) } })), [id, cursor]);
}

-- Broker ingress (issue 16): sources to consume, what they rejected, and
-- conflicting re-deliveries of events. Forward-only.

-- CloudEvents get their event ID from (source, id): a fourth origin.
ALTER TABLE events DROP CONSTRAINT events_origin_check;
ALTER TABLE events ADD CONSTRAINT events_origin_check
    CHECK (event_id_origin IN ('client', 'idempotency_key', 'content_digest', 'cloudevent'));

-- A broker to consume events from. Credentials are never stored: secret_ref
-- names an environment variable of the consuming process.
CREATE TABLE sources (
    id          uuid        NOT NULL,
    name        text        NOT NULL,
    kind        text        NOT NULL,
    -- Kind-specific settings (NATS: url, stream, subject, durable;
    -- RabbitMQ: url, queue, prefetch), validated by the service.
    config      jsonb       NOT NULL,
    secret_ref  text,
    enabled     boolean     NOT NULL DEFAULT true,
    version     bigint      NOT NULL DEFAULT 1,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT sources_pkey PRIMARY KEY (id),
    CONSTRAINT sources_kind_check CHECK (kind IN ('nats', 'rabbitmq')),
    CONSTRAINT sources_name_key UNIQUE (name)
);

CREATE INDEX sources_list_idx ON sources (created_at DESC, id DESC);

-- The live status of a source's consumer, as the process running it last
-- reported it (every few seconds). Counters are added to by every replica.
CREATE TABLE source_status (
    source_id      uuid        NOT NULL,
    connected      boolean     NOT NULL DEFAULT false,
    -- Messages waiting in the broker (JetStream: pending + unacknowledged;
    -- RabbitMQ: ready messages in the queue).
    pending        bigint,
    last_error     text,
    last_error_at  timestamptz,
    accepted       bigint      NOT NULL DEFAULT 0,
    rejected       bigint      NOT NULL DEFAULT 0,
    conflicts      bigint      NOT NULL DEFAULT 0,
    reported_by    text,
    reported_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT source_status_pkey PRIMARY KEY (source_id),
    CONSTRAINT source_status_source_fkey FOREIGN KEY (source_id)
        REFERENCES sources (id) ON DELETE CASCADE
);

-- Poison messages: acknowledged (so never re-delivered), kept here with the
-- reason and the first bytes of the message.
CREATE TABLE source_rejections (
    id           bigint GENERATED ALWAYS AS IDENTITY,
    source_id    uuid        NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now(),
    reason       text        NOT NULL,
    detail       text        NOT NULL,
    -- Size of the whole message; raw holds at most the first few KiB.
    size         integer     NOT NULL,
    raw          bytea       NOT NULL,
    headers      jsonb       NOT NULL DEFAULT '{}',
    CONSTRAINT source_rejections_pkey PRIMARY KEY (id),
    CONSTRAINT source_rejections_source_fkey FOREIGN KEY (source_id)
        REFERENCES sources (id) ON DELETE CASCADE,
    CONSTRAINT source_rejections_reason_check
        CHECK (reason IN ('not_json', 'missing_type', 'too_large', 'bad_event_id', 'invalid'))
);

CREATE INDEX source_rejections_list_idx ON source_rejections (source_id, id DESC);

-- A re-delivery of an event's ID with other content, from a broker (over
-- HTTP it is answered 409 instead). The event keeps its first content.
CREATE TABLE event_conflicts (
    id           bigint GENERATED ALWAYS AS IDENTITY,
    event_id     text        NOT NULL,
    source_id    uuid,
    seen_at      timestamptz NOT NULL DEFAULT now(),
    -- Which of event_type, source, occurred_at, payload differ.
    differs      text[]      NOT NULL,
    event_type   text        NOT NULL,
    source       text        NOT NULL,
    occurred_at  timestamptz,
    payload      jsonb       NOT NULL,
    CONSTRAINT event_conflicts_pkey PRIMARY KEY (id),
    CONSTRAINT event_conflicts_event_fkey FOREIGN KEY (event_id)
        REFERENCES events (event_id) ON DELETE CASCADE,
    CONSTRAINT event_conflicts_source_fkey FOREIGN KEY (source_id)
        REFERENCES sources (id) ON DELETE SET NULL
);

CREATE INDEX event_conflicts_event_idx ON event_conflicts (event_id, id);

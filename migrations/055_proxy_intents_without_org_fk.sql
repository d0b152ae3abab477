-- A proxied call's intent no longer references its organization by a foreign key. The check took FOR KEY SHARE on the
-- organization's row for every intent while that row's event counter is updated by every append: each intent added a
-- locker beside the append's (a MultiXact), about 0.1-0.35 ms of Postgres CPU per call. Intents live for one call; the
-- organization exists when its key authenticates the call, and the sweep drops intents of an organization since deleted.
ALTER TABLE proxy_call_intents DROP CONSTRAINT IF EXISTS proxy_call_intents_org_id_fkey;
